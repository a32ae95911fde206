/**
 * The trainer API under `/api`: rollouts, the long poll for pending requests, completions,
 * samples. Shapes are documented in docs/api.md ("Trainer side").
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { PauseGate } from "../../generation/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import {
  compactTurnTree,
  type Rollout,
  type RolloutActions,
  type SampleOptions,
  sharedPrefixTree,
  turnTree,
  versionNumber,
} from "../../trajectory/mod.ts";
import { sampleForm, samplesBody } from "./sample_forms.ts";
import { GatewayError } from "../gateway_error.ts";
import { httpStatus } from "../http_errors.ts";
import { SampleFeed } from "./sample_feed.ts";
import { pendingBody, requestedIdEncoding, sampleBody } from "./id_transport.ts";
import { presentedToken } from "../auth.ts";
import { jsonBodyRefusal, sameToken } from "../security/mod.ts";
import { readJsonBody } from "../read_body.ts";
import {
  AckSchema,
  AppendSchema,
  CompleteSchema,
  CreateRolloutSchema,
  FailSchema,
  FinishSchema,
  parseOrThrow,
} from "./trainer_schema.ts";

/** The id transport a trainer-API request asks for (`?ids=`, `Accept`); JSON by default. */
function idEncoding(c: Context) {
  return requestedIdEncoding(c.req.query("ids"), c.req.header("accept"));
}

export interface TrainerRouteOptions {
  /** Every change the trainer makes goes through it. */
  rollouts: RolloutActions;
  model: PolicyModel;
  maxBodyBytes: number;
  adminToken?: string;
  /** Base URL agents use to reach this gateway; default: from the request's Host header. */
  publicUrl?: string;
  /** Backend given to rollouts that name none (a black-box default); unset: the runner's. */
  defaultRolloutBackend?: string;
  /** Backend names a rollout may choose; unset: any name is accepted. */
  backends?: readonly string[];
  /** Pause/drain for weight syncs (`/pause`, `/resume`, `/status`); unset: those routes 404. */
  pause?: PauseGate;
  /** Gateway-wide sample options (label policy, reward mode, SFT); rollouts may override. */
  sampleOptions?: Partial<SampleOptions>;
  /** Default of `split_special_tokens` for new rollouts. */
  splitSpecialTokens?: boolean;
}

/** Longest long poll, so a trainer cannot park a connection forever. */
const MAX_WAIT_S = 300;

const API_ERROR_TYPES: Readonly<Record<number, string>> = {
  401: "unauthorized",
  404: "not_found",
  409: "conflict",
  // The request was withdrawn (its agent is gone, its turn timed out): discard the generation.
  410: "gone",
  413: "request_too_large",
  429: "rate_limited",
};

function apiError(c: Context, status: number, message: string): Response {
  const type = API_ERROR_TYPES[status] ?? (status >= 500 ? "server_error" : "invalid_request");
  return c.json({ error: { type, message } }, status as ContentfulStatusCode);
}

function turnView(t: Rollout["turns"][number]) {
  return {
    id: t.id,
    index: t.index,
    parent: t.parent?.id ?? null,
    mount: t.mount,
    status: t.status,
    error: t.error ?? null,
    prompt_length: t.promptLength,
    rendered_messages: t.renderedMessages,
    output_length: t.outputIds.length,
    finish_reason: t.finishReason ?? null,
    malformed_tool_calls: t.malformedToolCalls,
    weight_version: t.weightVersion ?? null,
    ...(t.facts ? { facts: t.facts } : {}),
    timings: t.timings,
    chain: t.chain,
    session: t.session,
    special_text: t.specialText.length,
  };
}

export function trainerRoutes(o: TrainerRouteOptions): Hono {
  const app = new Hono();
  const { rollouts, rollouts: { gate } } = o;
  const feed = new SampleFeed(rollouts.sampleLog);
  rollouts.onSamples(() => feed.wake());
  const body = async <T>(c: Context, schema: z.ZodType<T>, what: string): Promise<T> => {
    const raw = c.req.header("content-length") === "0" || !c.req.raw.body
      ? {}
      : await readJsonBody(c.req.raw, o.maxBodyBytes);
    try {
      return parseOrThrow(schema, raw ?? {}, what);
    } catch (e) {
      throw new GatewayError(400, (e as Error).message);
    }
  };
  const rollout = (c: Context): Rollout => {
    const r = rollouts.require(c.req.param("id")!);
    r.touch();
    return r;
  };

  app.use("*", async (c, next) => {
    if (o.adminToken && !sameToken(presentedToken(c.req.raw.headers), o.adminToken)) {
      return apiError(c, 401, "the trainer API requires the admin token (ROLLGATE_ADMIN_TOKEN)");
    }
    const notJson = jsonBodyRefusal(c.req.raw);
    if (notJson) return apiError(c, 415, notJson);
    await next();
  });
  app.onError((e, c) => {
    const status = httpStatus(e);
    if (status !== undefined) return apiError(c, status, e.message);
    console.error("rollgate: trainer API error:", e);
    return apiError(c, 500, (e as Error).message);
  });

  app.post("/rollouts", async (c) => {
    const spec = await body(c, CreateRolloutSchema, "rollout");
    if (spec.backend !== undefined && o.backends && !o.backends.includes(spec.backend)) {
      const known = o.backends.join(", ");
      throw new GatewayError(
        400,
        `invalid rollout: unknown backend ${spec.backend} (known: ${known})`,
      );
    }
    // Bound before the rollout exists: a setting the family does not take is a 400, and the
    // rollout's first turn renders with it.
    if (spec.template) await o.model.withTemplate(spec.template);
    const r = await rollouts.create({
      ...spec,
      backend: spec.backend ?? o.defaultRolloutBackend,
      splitSpecialTokens: spec.split_special_tokens ?? o.splitSpecialTokens ?? false,
      sampleOptions: {
        ...(spec.labels ? { labels: spec.labels } : {}),
        ...(spec.reward_mode ? { rewardMode: spec.reward_mode } : {}),
        ...(spec.sft?.weight !== undefined ? { sftWeight: spec.sft.weight } : {}),
        ...(spec.sft?.tools ? { sftTools: spec.sft.tools } : {}),
        ...(spec.max_staleness !== undefined ? { maxStaleness: spec.max_staleness } : {}),
      },
    });
    const base = o.publicUrl ?? `http://${c.req.header("host") ?? "127.0.0.1"}`;
    return c.json({
      id: r.id,
      token: r.token,
      base_url: `${base.replace(/\/$/, "")}/rollout/${r.id}`,
    }, 201);
  });
  app.get("/rollouts", (c) => c.json({ rollouts: rollouts.list().map((r) => r.summary(false)) }));
  app.get("/rollouts/:id", (c) => {
    const r = rollout(c);
    return c.json({ ...r.summary(), turn_list: r.turns.map(turnView) });
  });
  app.delete("/rollouts/:id", async (c) => {
    const r = rollout(c);
    await rollouts.delete(r);
    return c.json({ id: r.id, deleted: true });
  });
  app.post("/rollouts/:id/finish", async (c) => {
    const r = rollout(c);
    // Checked before anything changes: a bad `ids` must not finish the rollout.
    const encoding = idEncoding(c);
    const { reward, weight_version } = await body(c, FinishSchema, "finish request");
    if (r.status === "finished") throw new GatewayError(409, `rollout ${r.id} is already finished`);
    const samples = await rollouts.finish(
      r,
      reward ?? null,
      o.sampleOptions,
      versionNumber(weight_version),
    );
    return c.json({
      id: r.id,
      reward: r.reward,
      samples: samples.map((s) => sampleBody(s, encoding)),
    });
  });
  app.get("/rollouts/:id/samples", (c) => {
    const r = rollout(c);
    const body = samplesBody(r, sampleForm(c.req.query("form")), idEncoding(c), o.sampleOptions);
    return c.body(body, 200, { "content-type": "application/json" });
  });
  app.get("/rollouts/:id/tree", (c) => {
    const r = rollout(c);
    const form = c.req.query("form") ?? "full";
    if (form === "compact") return c.json(compactTurnTree(r));
    if (form !== "full") throw new GatewayError(400, `form must be full or compact, got ${form}`);
    return c.json({ ...turnTree(r), shared_prefix: sharedPrefixTree(r) });
  });
  app.get("/samples/stream", (c) => {
    const after = c.req.query("after");
    if (after !== undefined && !/^\d{1,15}$/.test(after)) {
      throw new GatewayError(400, `after must be a cursor (an integer ≥ 0), got ${after}`);
    }
    return feed.response(after === undefined ? undefined : Number(after));
  });

  if (o.pause) {
    const pause = o.pause;
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
  }

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
      const { lease } = await body(c, AckSchema, verb);
      const granted = await gate.ack(
        c.req.param("rid"),
        lease === undefined ? undefined : lease * 1000,
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
