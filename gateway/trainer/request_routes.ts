/**
 * The trainer API's pending requests: the long poll for the next ones (`/requests/next`, one or
 * up to `max`, each prompt whole or as a delta on a request the same trainer took, and with
 * `ack=1` each already leased, as an `ack` would lease it), their acknowledgement and lease
 * renewal, and their answers: ids appended as they are generated, the completion, or a failure;
 * appends, acknowledgements and completions also several in one call.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { z } from "zod";
import type { HandedRequest, LeasedNext } from "../../generation/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import { type ApiError, apiFailure } from "./api_error.ts";
import { type IdEncoding, pendingBody } from "./id_transport.ts";
import { PromptBases } from "./prompt_bases.ts";
import { idEncoding, type TrainerContext } from "./trainer_context.ts";
import {
  AckManySchema,
  AckSchema,
  AppendManySchema,
  AppendSchema,
  CompleteManySchema,
  CompleteSchema,
  FailSchema,
} from "./trainer_schema.ts";

/** Longest long poll, so a trainer cannot park a connection forever. */
const MAX_WAIT_S = 300;
/** Most requests one `next` hands out (`?max=`). */
export const MAX_NEXT_BATCH = 256;
/** What names a trainer for the delta form (`?trainer=`): its client's own id. */
const TRAINER_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** One item's answer in a batch: what the single call answers, or its error and status. */
type ItemResult = Record<string, unknown> | { request_id: string; status: number; error: ApiError };

/** Runs `each` for every item, independently: a refused item does not refuse the others. */
function eachItem<T extends { request_id: string }>(
  items: readonly T[],
  each: (item: T) => Promise<Record<string, unknown>>,
): Promise<{ results: ItemResult[] }> {
  return Promise.all(
    items.map((item) =>
      each(item).catch((e): ItemResult => ({ request_id: item.request_id, ...apiFailure(e) }))
    ),
  ).then((results) => ({ results }));
}

/** The delta form's query: `prompt=delta` with the trainer's id, or the full form. */
function promptForm(c: Context): { trainer?: string; delta: boolean } {
  const prompt = c.req.query("prompt") ?? "full";
  if (prompt !== "full" && prompt !== "delta") {
    throw new GatewayError(400, `prompt must be full or delta, not ${JSON.stringify(prompt)}`);
  }
  const trainer = c.req.query("trainer");
  if (trainer !== undefined && !TRAINER_ID.test(trainer)) {
    throw new GatewayError(400, "trainer must be 1-128 letters, digits or _ . : -");
  }
  if (prompt === "delta" && trainer === undefined) {
    throw new GatewayError(
      400,
      "prompt=delta needs trainer=<id>: a delta extends a request that trainer took",
    );
  }
  return { trainer, delta: prompt === "delta" };
}

/**
 * `ack=1`: hand the requests out leased, under `weight_version` (a whole number in the query is
 * the number, anything else the string); `undefined`: the two-step form, `next` then `ack`.
 */
function leasedForm(c: Context): LeasedNext | undefined {
  const ack = c.req.query("ack");
  const version = c.req.query("weight_version");
  if (ack === undefined || ack === "0") {
    if (version === undefined) return undefined;
    throw new GatewayError(400, "weight_version on next needs ack=1: it is what the ack names");
  }
  if (ack !== "1") throw new GatewayError(400, `ack must be 0 or 1, not ${JSON.stringify(ack)}`);
  if (version === undefined) return {};
  if (version === "") throw new GatewayError(400, "weight_version must not be empty");
  const n = Number(version);
  return { version: /^-?\d+$/.test(version) && Number.isSafeInteger(n) ? n : version };
}

export function requestRoutes({ options: o, body, checked }: TrainerContext): Hono {
  const app = new Hono();
  const { rollouts } = o;
  const bases = new PromptBases();

  /**
   * A handed-out request's body (with `lease_s` and `expires_at` as an `ack` answers them when it
   * was handed out leased), and who took it (a later delta may extend it).
   */
  const handOut = (
    { lease, ...request }: HandedRequest,
    encoding: IdEncoding,
    form: { trainer?: string; delta: boolean },
  ): string => {
    const base = form.delta ? bases.baseFor(request.prompt_base, form.trainer!) : undefined;
    if (form.trainer !== undefined) bases.taken(request.turn_id, request.request_id, form.trainer);
    const leased = lease && { lease_s: lease.lease_ms / 1000, expires_at: lease.expires_at };
    return pendingBody(leased ? { ...request, ...leased } : request, encoding, base);
  };

  app.get("/requests/next", async (c) => {
    const encoding = idEncoding(c);
    const form = promptForm(c);
    const leased = leasedForm(c);
    const wait = Number(c.req.query("wait") ?? 0);
    if (!Number.isFinite(wait) || wait < 0) {
      throw new GatewayError(400, "wait must be a number of seconds ≥ 0");
    }
    const maxParam = c.req.query("max");
    const max = maxParam === undefined ? undefined : Number(maxParam);
    if (max !== undefined && !(Number.isInteger(max) && max >= 1 && max <= MAX_NEXT_BATCH)) {
      throw new GatewayError(400, `max must be a whole number from 1 to ${MAX_NEXT_BATCH}`);
    }
    const filter = c.req.query("rollout");
    if (filter !== undefined) rollouts.require(filter);
    const leaseParam = c.req.query("lease");
    const lease = leaseParam === undefined ? undefined : Number(leaseParam) * 1000;
    const signal = c.req.raw.signal;
    const first = await rollouts.next(
      Math.min(wait, MAX_WAIT_S) * 1000,
      filter,
      signal,
      lease,
      leased,
    );
    if (!first) return c.body(null, 204);
    const json = { "content-type": "application/json" };
    if (max === undefined) return c.body(handOut(first, encoding, form), 200, json);
    // A batch: the first after the wait, then whatever else is queued now, up to `max`.
    const bodies = [handOut(first, encoding, form)];
    while (bodies.length < max) {
      const more = await rollouts.next(0, filter, signal, lease, leased);
      if (!more) break;
      bodies.push(handOut(more, encoding, form));
    }
    return c.body(`{"requests":[${bodies.join(",")}]}`, 200, json);
  });
  // A request's whole prompt, for a trainer that got a delta on ids it does not have.
  app.get("/requests/:rid/prompt", async (c) => {
    const rid = c.req.param("rid");
    const request = await rollouts.pendingRequest(rid);
    if (!request) {
      throw new GatewayError(404, "this gateway hands out no deltas and keeps no prompts");
    }
    return c.body(pendingBody(request, idEncoding(c)), 200, { "content-type": "application/json" });
  });

  const ackOne = async (
    rid: string,
    lease: number | undefined,
    version?: string | number,
  ) => {
    const granted = await rollouts.ack(
      rid,
      lease === undefined ? undefined : lease * 1000,
      version,
    );
    return {
      request_id: granted.request_id,
      lease_s: granted.lease_ms / 1000,
      expires_at: granted.expires_at,
    };
  };
  // One call, two names: the first `ack` on receipt, then `renew` before the lease runs out.
  for (const verb of ["ack", "renew"]) {
    app.post(`/requests/:rid/${verb}`, async (c) => {
      const { lease, weight_version } = await body(c, AckSchema, verb);
      return c.json(await ackOne(c.req.param("rid"), lease, weight_version));
    });
  }
  app.post("/requests/ack", async (c) => {
    const { request_ids, lease } = await body(c, AckManySchema, "acknowledgements");
    return c.json(
      await eachItem(
        request_ids.map((id) => ({ request_id: id })),
        (r) => ackOne(r.request_id, lease),
      ),
    );
  });

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
  const appendOne = async (rid: string, append: z.output<typeof AppendSchema>) => {
    const { output_ids, weight_version } = append;
    checkVocab(output_ids, "append");
    await rollouts.append(rid, output_ids, weight_version);
    return { request_id: rid, appended: output_ids.length };
  };
  app.post("/requests/:rid/append", async (c) => {
    return c.json(await appendOne(c.req.param("rid"), await body(c, AppendSchema, "append")));
  });
  app.post("/requests/append", async (c) => {
    const { appends } = await body(c, AppendManySchema, "appends");
    return c.json(
      await eachItem(
        appends,
        ({ request_id, ...a }) => appendOne(request_id, checked(AppendSchema, a, "append")),
      ),
    );
  });

  const stopIds = new Set(o.model.stopTokenIds);
  const completeOne = async (rid: string, completion: z.output<typeof CompleteSchema>) => {
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
    // Answered once the turn is recorded and journaled: a crash after this 200 loses nothing.
    // The same completion sent again (its answer was lost) is told so, and changes nothing.
    const result = await rollouts.complete(rid, completion);
    return { request_id: rid, completed: true, ...(result === "resent" ? { resent: true } : {}) };
  };
  app.post("/requests/:rid/complete", async (c) => {
    return c.json(
      await completeOne(c.req.param("rid"), await body(c, CompleteSchema, "completion")),
    );
  });
  app.post("/requests/complete", async (c) => {
    const { completions } = await body(c, CompleteManySchema, "completions");
    return c.json(
      await eachItem(
        completions,
        ({ request_id, ...x }) => completeOne(request_id, checked(CompleteSchema, x, "completion")),
      ),
    );
  });
  app.post("/requests/:rid/fail", async (c) => {
    const { error, status } = await body(c, FailSchema, "failure");
    await rollouts.fail(c.req.param("rid"), error, status);
    return c.json({ request_id: c.req.param("rid"), failed: true });
  });
  return app;
}
