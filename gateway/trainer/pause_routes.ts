/**
 * The trainer API's pause/drain for weight syncs: `/pause` holds new generations back, `/resume`
 * lets them go (naming, when the trainer says, the weight version now in force: what turns sent
 * from then on are stamped with), `/status` says where things stand; each answers with the pause
 * state and the pending requests.
 *
 * @module
 */
import { Hono } from "hono";
import type { PauseGate } from "../../generation/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import type { TrainerContext } from "./trainer_context.ts";
import { ResumeSchema } from "./trainer_schema.ts";

export function pauseRoutes({ options: o, body }: TrainerContext, pause: PauseGate): Hono {
  const app = new Hono();
  const gate = o.rollouts.gate;
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
    const { weight_version } = await body(c, ResumeSchema, "resume");
    if (weight_version !== undefined && o.replicated) {
      throw new GatewayError(
        400,
        "replicas keep no weight version in force: name it on append, complete or finish",
      );
    }
    pause.resume(weight_version);
    return c.json(await status());
  });
  app.get("/status", async (c) => c.json(await status()));
  return app;
}
