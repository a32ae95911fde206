/**
 * The agent-facing endpoints of the table in `agent_endpoints.ts` (turns, `count_tokens`,
 * models), mounted both under `/rollout/:id` and bare (`/v1/...`, `/v1beta/...`, rollout from the
 * token). Each protocol module converts; this file only does HTTP.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { toCanonicalCountTokensRequest } from "./anthropic/mod.ts";
import {
  geminiAdapter,
  geminiCall,
  toCanonicalCountTokensRequest as geminiCountTokensRequest,
} from "./gemini/mod.ts";
import type { ProtocolAdapter } from "../protocol.ts";
import { httpStatus } from "../http_errors.ts";
import { readBodyBytes, readJsonBody, resolveAgentRollout, sseResponse } from "../http/mod.ts";
import type { AnswerOptions } from "../../canonical/mod.ts";
import type { Rollout, RolloutActions, Turn } from "../../trajectory/mod.ts";
import { serveBlackBox, type Upstream } from "./black_box/mod.ts";
import { answerEvents } from "./answer_events.ts";
import { clientSession } from "./client_session.ts";
import { KnownPrefixes } from "./known_prefix.ts";
import { AGENT_ENDPOINTS, type AgentEndpoint } from "./agent_endpoints.ts";

export interface AgentRouteOptions {
  /** Turns start here. */
  rollouts: RolloutActions;
  maxBodyBytes: number;
  keepAliveMs: number;
  adminToken?: string;
  /** The model id `/v1/models` lists. */
  modelName: string;
  /** Black-box backends by name: rollouts whose `backend` names one are forwarded there. */
  upstreams?: Readonly<Record<string, Upstream>>;
  /** Bodies kept to read each rollout's next request from where it departs; default: a new set. */
  knownPrefixes?: KnownPrefixes;
  /**
   * A streamed answer's head waits for the whole answer up to this long (default 0: at once). A
   * replica holds it so that its death before the answer is out is a failed request the agent's
   * SDK retries on another replica, not a broken stream it does not.
   */
  streamHeadHoldMs?: number;
}

/** Status and message for any error thrown while serving an agent. */
export function errorStatus(e: unknown): { status: number; message: string } {
  const status = httpStatus(e);
  if (status !== undefined) return { status, message: (e as Error).message };
  console.error("rollgate: unexpected error serving an agent:", e);
  return { status: 500, message: `internal error: ${(e as Error)?.message ?? String(e)}` };
}

function errorResponse(c: Context, adapter: ProtocolAdapter, e: unknown): Response {
  const { status, message } = errorStatus(e);
  return c.json(adapter.errorBody(status, message) as object, status as 400);
}

export function agentRoutes(o: AgentRouteOptions): Hono {
  const app = new Hono();
  const prefixes = o.knownPrefixes ?? new KnownPrefixes();
  o.rollouts.onEnded((rollout) => prefixes.forget(rollout));
  const rolloutOf = (c: Context, e: AgentEndpoint) =>
    resolveAgentRollout(
      o.rollouts,
      c.req.param("id"),
      e.token(c.req.raw.headers, new URL(c.req.url)),
      o,
    );

  /**
   * Reads, converts and starts a turn (or answers a black-box one). Its own function so that the
   * request body and its parsed history are garbage once the turn is mounted and planned: the
   * caller then waits for the answer, possibly for minutes, holding only the turn.
   */
  const startTurn = async (
    c: Context,
    adapter: ProtocolAdapter,
    rollout: Rollout,
  ): Promise<Response | { turn: Turn; answer: AnswerOptions }> => {
    const upstream = rollout.backend ? o.upstreams?.[rollout.backend] : undefined;
    if (upstream) {
      const body = await readJsonBody(c.req.raw, o.maxBodyBytes);
      return await serveBlackBox(c, adapter, o.rollouts, rollout, upstream, body, o.keepAliveMs);
    }
    const bytes = await readBodyBytes(c.req.raw, o.maxBodyBytes) ??
      new Uint8Array(); // no body: the empty body's 400
    // Parsed from where it departs from the rollout's last request (or whole).
    const { body, request, known, keep } = prefixes.read(
      rollout,
      adapter,
      new URL(c.req.url),
      bytes,
    );
    const req = { ...request, session: clientSession(c.req.raw.headers, body) };
    const answer = { stream: req.stream, includeUsage: req.includeUsage };
    // Nothing after this await reads `body` or `req`: they are garbage while the prompt renders.
    const turn = await o.rollouts.startTurn(rollout, req, adapter.toolCallIdPrefix, known);
    keep(turn);
    return { turn, answer };
  };

  const turn = (e: AgentEndpoint, adapter: ProtocolAdapter) => async (c: Context) => {
    try {
      const rollout = rolloutOf(c, e);
      const started = await startTurn(c, adapter, rollout);
      if (started instanceof Response) return started;
      const { turn: t, answer } = started;
      o.rollouts.watch(t, c.req.raw.signal);
      if (!answer.stream) return c.json(adapter.toResponseBody(await t.result, answer) as object);
      await answered(t, o.streamHeadHoldMs ?? 0);
      return sseResponse({
        keepAliveMs: o.keepAliveMs,
        keepAlive: adapter.keepAlive,
        produce: () => Promise.resolve(answerEvents(adapter, t, answer)),
        onError: (e) => {
          const { status, message } = errorStatus(e);
          return adapter.streamErrorEvents(status, message);
        },
      });
    } catch (e) {
      return errorResponse(c, adapter, e);
    }
  };

  const countTokens = (e: AgentEndpoint) => async (c: Context) => {
    try {
      const rollout = rolloutOf(c, e);
      const body = await readJsonBody(c.req.raw, o.maxBodyBytes);
      // Anthropic's `count_tokens` answers `{input_tokens}`, Gemini's `countTokens` `{totalTokens}`.
      const gemini = e.adapter === geminiAdapter;
      const req = {
        ...(gemini
          ? geminiCountTokensRequest(geminiCall(new URL(c.req.url), body))
          : toCanonicalCountTokensRequest(body)),
        session: clientSession(c.req.raw.headers, body),
      };
      const n = await o.rollouts.countTokens(rollout, req);
      return c.json(gemini ? { totalTokens: n } : { input_tokens: n });
    } catch (err) {
      return errorResponse(c, e.adapter!, err);
    }
  };

  const models = (e: AgentEndpoint) => (c: Context) => {
    try {
      rolloutOf(c, e);
      const created = Math.floor(Date.now() / 1000);
      return c.json({
        object: "list",
        data: [{
          id: o.modelName,
          object: "model",
          created,
          owned_by: "rollgate",
          type: "model",
          display_name: o.modelName,
          created_at: new Date(created * 1000).toISOString(),
        }],
        has_more: false,
        first_id: o.modelName,
        last_id: o.modelName,
      });
    } catch (err) {
      return errorResponse(c, e.adapter!, err);
    }
  };

  /** Any other method on an agent path: a 405 in that path's protocol, naming the one it takes. */
  const wrongMethod = (adapter: ProtocolAdapter, allowed: string) => (c: Context) => {
    const path = new URL(c.req.url).pathname;
    c.header("allow", allowed);
    return c.json(
      adapter.errorBody(405, `${path} takes ${allowed}, not ${c.req.method}`) as object,
      405,
    );
  };

  const handlers = {
    turn: (e: AgentEndpoint) => turn(e, e.adapter!),
    count_tokens: countTokens,
    models,
  };
  for (const prefix of ["/rollout/:id/", "/"]) {
    for (const e of AGENT_ENDPOINTS) {
      if (!(e.serves in handlers) || !e.adapter) continue;
      const handler = handlers[e.serves as keyof typeof handlers](e);
      app.on(e.method, prefix + e.path, handler as (c: Context) => Response);
      app.all(prefix + e.path, wrongMethod(e.adapter, e.method));
    }
  }
  return app;
}

/**
 * Waits up to `holdMs` (0: not at all) for the turn's answer, so that its stream's head is written
 * with the whole answer: a replica that dies before then leaves a failed request, which SDKs
 * retry, not a stream cut after its first events, which they do not. A turn that fails meanwhile
 * throws (answered with its status, which SDKs retry too).
 */
async function answered(turn: Turn, holdMs: number): Promise<void> {
  if (holdMs <= 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((r) => timer = setTimeout(r, holdMs));
  try {
    await Promise.race([turn.result, late]);
  } finally {
    clearTimeout(timer);
  }
}
