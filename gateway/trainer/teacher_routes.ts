/**
 * The trainer API's teacher requests, when a teacher of the gateway is the trainer itself
 * (`--teacher NAME=trainer`): the long poll for the next scoring (`/teacher/requests/next`,
 * optionally of one teacher's name), its acknowledgement and lease renewal, and its answer: the
 * logprobs, or a failure (the gateway tries again, then names the positions missing). The same
 * delivery as the generation requests: an unacknowledged request is offered again.
 *
 * @module
 */
import { Hono } from "hono";
import type { TeacherQueue } from "../../generation/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import { pendingScoreBody } from "./id_transport.ts";
import { idEncoding, type TrainerContext } from "./trainer_context.ts";
import { AckSchema, TeacherCompleteSchema, TeacherFailSchema } from "./trainer_schema.ts";

/** Longest long poll, as for generation requests. */
const MAX_WAIT_S = 300;

export function teacherRoutes({ body }: TrainerContext, queue: TeacherQueue): Hono {
  const app = new Hono();
  app.get("/teacher/requests/next", async (c) => {
    const encoding = idEncoding(c);
    const wait = Number(c.req.query("wait") ?? 0);
    if (!Number.isFinite(wait) || wait < 0) {
      throw new GatewayError(400, "wait must be a number of seconds ≥ 0");
    }
    const lease = c.req.query("lease");
    const next = await queue.next(
      Math.min(wait, MAX_WAIT_S) * 1000,
      c.req.query("teacher"),
      c.req.raw.signal,
      lease === undefined ? undefined : Number(lease) * 1000,
    );
    if (!next) return c.body(null, 204);
    return c.body(pendingScoreBody(next, encoding), 200, { "content-type": "application/json" });
  });
  for (const verb of ["ack", "renew"]) {
    app.post(`/teacher/requests/:rid/${verb}`, async (c) => {
      const { lease, weight_version } = await body(c, AckSchema, verb);
      if (weight_version !== undefined) {
        throw new GatewayError(400, `invalid ${verb}: a teacher request takes no weight_version`);
      }
      const granted = queue.ack(c.req.param("rid"), lease === undefined ? undefined : lease * 1000);
      return c.json({
        request_id: granted.request_id,
        lease_s: granted.lease_ms / 1000,
        expires_at: granted.expires_at,
      });
    });
  }
  app.post("/teacher/requests/:rid/complete", async (c) => {
    const { logprobs } = await body(c, TeacherCompleteSchema, "teacher answer");
    queue.complete(c.req.param("rid"), logprobs);
    return c.json({ request_id: c.req.param("rid"), completed: true });
  });
  app.post("/teacher/requests/:rid/fail", async (c) => {
    const { error } = await body(c, TeacherFailSchema, "teacher failure");
    queue.fail(c.req.param("rid"), error);
    return c.json({ request_id: c.req.param("rid"), failed: true });
  });
  return app;
}
