/**
 * The agent-facing endpoints, mounted both under `/rollout/:id` and bare (`/v1/...`,
 * `/v1beta/...`, rollout from the token). Each protocol module converts; this file only does HTTP.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import { anthropicAdapter, toCanonicalCountTokensRequest } from "./anthropic/mod.ts";
import { openaiChatAdapter } from "./openai_chat/mod.ts";
import { responsesAdapter } from "./responses/mod.ts";
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
  const rolloutOf = (c: Context) =>
    resolveAgentRollout(o.rollouts, c.req.param("id"), c.req.raw, o);

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
    const bytes = await readBodyBytes(c.req.raw, o.maxBodyBytes);
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

  const turn = (adapter: ProtocolAdapter) => async (c: Context) => {
    try {
      const rollout = rolloutOf(c);
      const started = await startTurn(c, adapter, rollout);
      if (started instanceof Response) return started;
      const { turn: t, answer } = started;
      o.rollouts.watch(t, c.req.raw.signal);
      if (!answer.stream) return c.json(adapter.toResponseBody(await t.result, answer) as object);
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

  const countTokens = async (c: Context) => {
    try {
      const rollout = rolloutOf(c);
      const body = await readJsonBody(c.req.raw, o.maxBodyBytes);
      const req = {
        ...toCanonicalCountTokensRequest(body),
        session: clientSession(c.req.raw.headers, body),
      };
      return c.json({ input_tokens: await o.rollouts.countTokens(rollout, req) });
    } catch (e) {
      return errorResponse(c, anthropicAdapter, e);
    }
  };

  /** Gemini's `countTokens`: the prompt's length in policy tokens, `{totalTokens}`. */
  const geminiCountTokens = async (c: Context) => {
    try {
      const rollout = rolloutOf(c);
      const body = await readJsonBody(c.req.raw, o.maxBodyBytes);
      const req = {
        ...geminiCountTokensRequest(geminiCall(new URL(c.req.url), body)),
        session: clientSession(c.req.raw.headers, body),
      };
      return c.json({ totalTokens: await o.rollouts.countTokens(rollout, req) });
    } catch (e) {
      return errorResponse(c, geminiAdapter, e);
    }
  };

  const models = (c: Context) => {
    try {
      rolloutOf(c);
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
    } catch (e) {
      return errorResponse(c, openaiChatAdapter, e);
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

  for (const prefix of ["/rollout/:id", ""]) {
    const routes: [string, "POST" | "GET", ProtocolAdapter, (c: Context) => unknown][] = [
      ["v1/messages", "POST", anthropicAdapter, turn(anthropicAdapter)],
      ["v1/messages/count_tokens", "POST", anthropicAdapter, countTokens],
      ["v1/chat/completions", "POST", openaiChatAdapter, turn(openaiChatAdapter)],
      ["v1/responses", "POST", responsesAdapter, turn(responsesAdapter)],
      ["v1/models", "GET", openaiChatAdapter, models],
      // Gemini names the model and the method in the path: `models/<model>:<method>`.
      ["v1beta/models/:call{.+:generateContent}", "POST", geminiAdapter, turn(geminiAdapter)],
      ["v1beta/models/:call{.+:streamGenerateContent}", "POST", geminiAdapter, turn(geminiAdapter)],
      ["v1beta/models/:call{.+:countTokens}", "POST", geminiAdapter, geminiCountTokens],
    ];
    for (const [path, method, adapter, handler] of routes) {
      app.on(method, `${prefix}/${path}`, handler as (c: Context) => Response);
      app.all(`${prefix}/${path}`, wrongMethod(adapter, method));
    }
  }
  return app;
}
