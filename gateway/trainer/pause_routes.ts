/**
 * The trainer API's pause/drain for weight syncs: `/pause` holds new generations back, `/resume`
 * lets them go, `/status` says where things stand; each answers with the pause state and the
 * pending requests.
 *
 * @module
 */
import { Hono } from "hono";
import type { RolloutActions } from "../../trajectory/mod.ts";

export function pauseRoutes(rollouts: RolloutActions): Hono {
  const app = new Hono();
  const status = async () => ({
    ...rollouts.pauseStatus(),
    pending_requests: await rollouts.pendingRequests(),
    requests: await rollouts.requestStats(),
  });
  app.post("/pause", async (c) => {
    rollouts.pause();
    return c.json(await status());
  });
  app.post("/resume", async (c) => {
    rollouts.resume();
    return c.json(await status());
  });
  app.get("/status", async (c) => c.json(await status()));
  return app;
}
