/**
 * The HTTP surface: agent protocols (Anthropic Messages, OpenAI Chat, OpenAI Responses), the
 * trainer API, SSE, host tools, auth, the black-box relay (`black_box/`), the one mapping of
 * domain errors to HTTP statuses (`http_errors.ts`), what keeps a public address safe
 * (`security/`), and health, readiness, metrics and the access log (`operations/`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createGateway } from "./mod.ts";
 * import { PolicyModel } from "../model/mod.ts";
 *
 * const gw = createGateway({ model: await PolicyModel.load() });
 * // Deno.serve({ port: 7860 }, gw.app.fetch) serves it; here the app answers in process.
 * const created = await gw.app.request("/api/rollouts", {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ metadata: { task: "demo" } }),
 * });
 * assert.equal(created.status, 201);
 * const { id, token } = await created.json();
 * assert.ok(token.startsWith("rg_"));
 * assert.equal(gw.rollouts.require(id).metadata.task, "demo");
 * ```
 *
 * @module
 */
export {
  createGateway,
  type Gateway,
  type GatewayLimits,
  type GatewayOptions,
  type GatewayTimeouts,
} from "./app.ts";
export { BASE64_IDS_MEDIA_TYPE, idsFromBase64, pendingBody } from "./trainer/mod.ts";
export {
  agentAccess,
  type ConnectionLimits,
  DEFAULT_KEEPALIVE_MS,
  DEFAULT_MAX_BODY_BYTES,
  type HttpTimeouts,
  presentedToken,
  readBodyBytes,
  readJsonBody,
  serveHttp,
} from "./http/mod.ts";
export { type RolloutCall, rolloutCall } from "./rollout_calls.ts";
export type { ErrorShape } from "./agent/mod.ts";
export { httpStatus } from "./http_errors.ts";
export type { ProtocolAdapter, SseEvent } from "./protocol.ts";
export {
  anthropicAdapter,
  AnthropicUpstream,
  checkUpstream,
  openaiChatAdapter,
  OpenAIUpstream,
  responsesAdapter,
  type Upstream,
  upstreamsFromFlags,
} from "./agent/mod.ts";
export { isLoopbackHost, requireTokenForPublicBind, sameToken } from "./security/mod.ts";
export { GatewayError } from "./gateway_error.ts";
export { GatewayMetrics, operationsRoutes, Readiness } from "./operations/mod.ts";
