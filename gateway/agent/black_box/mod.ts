/**
 * The black-box wing of the gateway: a rollout whose backend names a hosted API has its agent's
 * request forwarded unchanged with the official SDKs, the upstream's events relayed as they
 * arrive, and a message-level record kept (no token ids: the hosted model's tokenizer is not the
 * policy's).
 *
 * - `upstream.ts`: the hosted APIs (`AnthropicUpstream`, `OpenAIUpstream`) behind {@link Upstream}.
 * - `upstream_answer.ts`: a final upstream response read back into the canonical message.
 * - `serve_black_box.ts`: the HTTP side (forward, relay, record, hold the terminal event).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { upstreamKeyWarnings, upstreamsFromFlags } from "./mod.ts";
 *
 * const upstreams = upstreamsFromFlags({ openaiUrl: "http://127.0.0.1:9999/v1" });
 * assert.deepEqual(Object.keys(upstreams), ["openai"]);
 * // The SDKs' URL conventions: OpenAI's base holds /v1, Anthropic's stops before it.
 * assert.throws(() => upstreamsFromFlags({ openaiUrl: "http://127.0.0.1:9999" }), /must include/);
 * assert.throws(() => upstreamsFromFlags({ anthropicUrl: "http://h/v1" }), /must not end in \/v1/);
 * assert.deepEqual(upstreamKeyWarnings({ openaiUrl: "http://h/v1" }, () => undefined).length, 1);
 * ```
 *
 * @module
 */
export {
  AnthropicUpstream,
  OpenAIUpstream,
  type Upstream,
  upstreamKeyWarnings,
  upstreamsFromFlags,
} from "./upstream.ts";
export { serveBlackBox } from "./serve_black_box.ts";
