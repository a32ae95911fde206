/**
 * The agent wing: the routes agents call (`/v1/messages`, `/v1/chat/completions`, `/v1/responses`,
 * `/v1/models`, Gemini's `/v1beta/models/<model>:<method>`, under `/rollout/:id` or bare), one
 * folder per wire protocol (`anthropic/`, `openai_chat/`, `responses/`, `gemini/`: pure
 * conversions), the protocol kit they share (answer events, text deltas, whole answers, tool
 * arguments, client sessions), the black-box relay (`black_box/`) and the host tools
 * (`/rollout/:id/tools/...`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { agentRoutes } from "./mod.ts";
 * import { PolicyModel } from "../../model/mod.ts";
 * import { RolloutActions } from "../../trajectory/mod.ts";
 *
 * const model = await PolicyModel.load();
 * const rollouts = new RolloutActions({ model });
 * const rollout = await rollouts.create({});
 * const app = agentRoutes({ rollouts, maxBodyBytes: 1 << 20, keepAliveMs: 5_000, modelName: "policy" });
 * const bad = await app.request(`/rollout/${rollout.id}/v1/messages`, {
 *   method: "POST",
 *   headers: { "content-type": "application/json" },
 *   body: JSON.stringify({ model: "policy", messages: "not a list" }),
 * });
 * // A protocol-shaped refusal (Anthropic's error body), and nothing recorded.
 * assert.equal(bad.status, 400);
 * assert.equal((await bad.json()).error.type, "invalid_request_error");
 * assert.equal(rollout.turns.length, 0);
 * ```
 *
 * @module
 */
export {
  AnthropicUpstream,
  checkUpstream,
  OpenAIUpstream,
  type Upstream,
  upstreamsFromFlags,
} from "./black_box/mod.ts";
export { agentRoutes } from "./agent_routes.ts";
export { DEFAULT_KNOWN_PREFIX_BYTES, KnownPrefixes } from "./known_prefix.ts";
export {
  BUILTIN_HOST_TOOLS,
  DEFAULT_MAX_TOOL_BODY_BYTES,
  DEFAULT_MAX_TOOL_BYTES_PER_ROLLOUT,
  type HostTool,
  hostToolRoutes,
} from "./host_tools.ts";
export { anthropicAdapter } from "./anthropic/mod.ts";
export { openaiChatAdapter } from "./openai_chat/mod.ts";
export { responsesAdapter } from "./responses/mod.ts";
