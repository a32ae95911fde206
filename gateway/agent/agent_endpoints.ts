/**
 * Every route an agent calls, in one table: its path (under `/rollout/:id/`, and bare, the
 * rollout then named by the token), method, what it serves, the protocol its answers and errors
 * speak, how a request carries the rollout's token and which body cap applies. The agent routes
 * and host tools are declared from it (`agent_routes.ts`, `host_tools.ts`) and a replica's front
 * reads it (`rollout_calls.ts`) to know, before it reads a body, which rollout a call belongs to,
 * whose token opens it and how to refuse it in its protocol. A new protocol is a row here (and
 * its route handler); `agent_endpoints_test.ts` lists the rows.
 *
 * @module
 */
import type { ProtocolAdapter } from "../protocol.ts";
import { presentedToken } from "../http/mod.ts";
import { anthropicAdapter } from "./anthropic/mod.ts";
import { openaiChatAdapter } from "./openai_chat/mod.ts";
import { responsesAdapter } from "./responses/mod.ts";
import { geminiAdapter } from "./gemini/mod.ts";

/** How a refusal is written in a route's protocol (an adapter; the host tools' plain JSON). */
export interface ErrorShape {
  errorBody(status: number, message: string): unknown;
  /** Events that report an error inside a stream already started (streaming routes). */
  streamErrorEvents?: ProtocolAdapter["streamErrorEvents"];
}

/** The host tools' errors: `{error: {type, message}}`. */
export const HOST_TOOL_ERRORS: ErrorShape = {
  errorBody: (status, message) => ({
    error: { type: status === 404 ? "not_found" : "tool_error", message },
  }),
};

export interface AgentEndpoint {
  /**
   * Below `/rollout/:id/` and `/` (`:name` segments are parameters; a last `:name{regex}` takes
   * the rest of the path, as Hono reads it).
   */
  path: string;
  method: "GET" | "POST";
  serves: "turn" | "count_tokens" | "models" | "tool" | "exit";
  /** The protocol of a turn, `count_tokens` or `models` route. */
  adapter?: ProtocolAdapter;
  /** How its refusals are written. */
  errors: ErrorShape;
  /** The credential a request carries (the rollout's token, or the admin token). */
  token(headers: Headers, url: URL): string | null;
  /** Whether a request body asks for a streamed answer (turn routes). */
  streams?(body: unknown, url: URL): boolean;
  /** Which body cap applies: agent bodies (`maxBodyBytes`), host tools (`maxToolBodyBytes`). */
  limit: "agent" | "tool";
}

/** The `stream` field of a request body (OpenAI, Anthropic, Responses). */
const streamField = (body: unknown) => (body as { stream?: unknown } | null)?.stream === true;

const turn = (path: string, adapter: ProtocolAdapter): AgentEndpoint => ({
  path,
  method: "POST",
  serves: "turn",
  adapter,
  errors: adapter,
  token: presentedToken,
  streams: streamField,
  limit: "agent",
});

/** Gemini names the model and the method in the path (`models/<model>:<method>`), streaming too. */
const gemini = (method: string, serves: "turn" | "count_tokens"): AgentEndpoint => ({
  path: `v1beta/models/:call{.+:${method}}`,
  method: "POST",
  serves,
  adapter: geminiAdapter,
  errors: geminiAdapter,
  token: presentedToken,
  streams: serves === "turn" ? () => method === "streamGenerateContent" : undefined,
  limit: "agent",
});

export const AGENT_ENDPOINTS: readonly AgentEndpoint[] = [
  turn("v1/messages", anthropicAdapter),
  {
    path: "v1/messages/count_tokens",
    method: "POST",
    serves: "count_tokens",
    adapter: anthropicAdapter,
    errors: anthropicAdapter,
    token: presentedToken,
    limit: "agent",
  },
  turn("v1/chat/completions", openaiChatAdapter),
  turn("v1/responses", responsesAdapter),
  {
    path: "v1/models",
    method: "GET",
    serves: "models",
    adapter: openaiChatAdapter,
    errors: openaiChatAdapter,
    token: presentedToken,
    limit: "agent",
  },
  gemini("generateContent", "turn"),
  gemini("streamGenerateContent", "turn"),
  gemini("countTokens", "count_tokens"),
  {
    path: "v1/tools/:name",
    method: "POST",
    serves: "tool",
    errors: HOST_TOOL_ERRORS,
    token: presentedToken,
    limit: "tool",
  },
  {
    path: "v1/exit",
    method: "POST",
    serves: "exit",
    errors: HOST_TOOL_ERRORS,
    token: presentedToken,
    limit: "tool",
  },
];

/** The endpoint a path below the rollout's prefix names (any method), if any. */
export function agentEndpoint(rest: string): AgentEndpoint | undefined {
  const parts = rest.split("/");
  return AGENT_ENDPOINTS.find((_, i) => MATCHERS[i](parts));
}

/** Whether a path's segments match each row's pattern. */
const MATCHERS = AGENT_ENDPOINTS.map((e) => {
  const pattern = e.path.split("/");
  const last = /^:\w+\{(.+)\}$/.exec(pattern[pattern.length - 1]);
  const tail = last ? new RegExp(`^(?:${last[1]})$`) : undefined;
  const fixed = tail ? pattern.slice(0, -1) : pattern;
  return (parts: string[]) =>
    (tail ? parts.length > fixed.length : parts.length === fixed.length) &&
    fixed.every((p, i) => p.startsWith(":") ? parts[i] !== "" : p === parts[i]) &&
    (!tail || tail.test(parts.slice(fixed.length).join("/")));
});
