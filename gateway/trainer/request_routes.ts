/**
 * The trainer API's pending requests: the long poll for the next one (`/requests/next`), its
 * acknowledgement and lease renewal, and its answer: ids appended as they are generated, the
 * completion, or a failure.
 *
 * @module
 */
import { Hono } from "hono";
import { GatewayError } from "../gateway_error.ts";
import { pendingBody } from "./id_transport.ts";
import { idEncoding, type TrainerContext } from "./trainer_context.ts";
import { AckSchema, AppendSchema, CompleteSchema, FailSchema } from "./trainer_schema.ts";

/** Longest long poll, so a trainer cannot park a connection forever. */
const MAX_WAIT_S = 300;

export function requestRoutes({ options: o, body }: TrainerContext): Hono {
  const app = new Hono();
  const { rollouts, rollouts: { gate } } = o;

  app.get("/requests/next", async (c) => {
    const encoding = idEncoding(c);
    const wait = Number(c.req.query("wait") ?? 0);
    if (!Number.isFinite(wait) || wait < 0) {
      throw new GatewayError(400, "wait must be a number of seconds ≥ 0");
    }
    const filter = c.req.query("rollout");
    if (filter !== undefined) rollouts.require(filter);
    const lease = c.req.query("lease");
    const next = await gate.next(
      Math.min(wait, MAX_WAIT_S) * 1000,
      filter,
      c.req.raw.signal,
      lease === undefined ? undefined : Number(lease) * 1000,
    );
    if (!next) return c.body(null, 204);
    return c.body(pendingBody(next, encoding), 200, { "content-type": "application/json" });
  });
  // One call, two names: the first `ack` on receipt, then `renew` before the lease runs out.
  for (const verb of ["ack", "renew"]) {
    app.post(`/requests/:rid/${verb}`, async (c) => {
      const { lease, weight_version } = await body(c, AckSchema, verb);
      const granted = await gate.ack(
        c.req.param("rid"),
        lease === undefined ? undefined : lease * 1000,
        weight_version,
      );
      return c.json({
        request_id: granted.request_id,
        lease_s: granted.lease_ms / 1000,
        expires_at: granted.expires_at,
      });
    });
  }
  const checkVocab = (ids: number[], what: string) => {
    const vocab = o.model.vocabSize;
    const bad = ids.find((id) => id >= vocab);
    if (bad !== undefined) {
      throw new GatewayError(
        400,
        `invalid ${what}: token id ${bad} is outside the vocabulary (${vocab})`,
      );
    }
  };
  app.post("/requests/:rid/append", async (c) => {
    const { output_ids, weight_version } = await body(c, AppendSchema, "append");
    checkVocab(output_ids, "append");
    await rollouts.append(c.req.param("rid"), output_ids, weight_version);
    return c.json({ request_id: c.req.param("rid"), appended: output_ids.length });
  });
  const stopIds = new Set(o.model.stopTokenIds);
  app.post("/requests/:rid/complete", async (c) => {
    const completion = await body(c, CompleteSchema, "completion");
    checkVocab(completion.output_ids, "completion");
    for (const set of completion.sampling_mask ?? []) checkVocab(set, "completion sampling_mask");
    // Generation ends at a stop id: ids after one were never the policy's turn.
    const ids = completion.output_ids;
    const stop = ids.findIndex((id) => stopIds.has(id));
    if (stop >= 0 && stop < ids.length - 1) {
      throw new GatewayError(
        400,
        `invalid completion: output_ids go on for ${
          ids.length - 1 - stop
        } id(s) after the stop id ${
          ids[stop]
        } at position ${stop}; a completion ends at its stop id`,
      );
    }
    const rid = c.req.param("rid");
    // Answered once the turn is recorded and journaled: a crash after this 200 loses nothing.
    await rollouts.complete(rid, completion);
    return c.json({ request_id: rid, completed: true });
  });
  app.post("/requests/:rid/fail", async (c) => {
    const { error, status } = await body(c, FailSchema, "failure");
    await rollouts.fail(c.req.param("rid"), error, status);
    return c.json({ request_id: c.req.param("rid"), failed: true });
  });
  return app;
}
