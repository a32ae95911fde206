/**
 * The trainer API's pause/drain for weight syncs: `/pause` holds new generations back, `/resume`
 * lets them go, `/status` says where things stand; each answers with the pause state and the
 * pending requests.
 *
 * @module
 */
import { Hono } from "hono";
import type { PauseGate, RequestQueue } from "../../generation/mod.ts";

export function pauseRoutes(pause: PauseGate, gate: RequestQueue): Hono {
  const app = new Hono();
  const status = async () => ({
    ...pause.status(),
    pending_requests: await gate.pendingCount(),
    requests: await gate.stats(),
  });
  app.post("/pause", async (c) => {
    pause.pause();
    return c.json(await status());
  });
  app.post("/resume", async (c) => {
    pause.resume();
    return c.json(await status());
  });
  app.get("/status", async (c) => c.json(await status()));
  return app;
}
