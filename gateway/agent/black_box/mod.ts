/**
 * The black-box wing of the gateway: a rollout whose backend names a hosted API has its agent's
 * request forwarded unchanged with the official SDKs, the upstream's events relayed as they
 * arrive, and a message-level record kept (no token ids: the hosted model's tokenizer is not the
 * policy's).
 *
 * - `upstream.ts`: the hosted APIs (`AnthropicUpstream`, `OpenAIUpstream`) behind {@link Upstream}.
 * - `upstream_answer.ts`: a final upstream response read back into the canonical message.
 * - `serve_black_box.ts`: the HTTP side (forward, relay, record, hold the terminal event).
 * - `upstream_check.ts`: the start-up check of an upstream's URL form and API key.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkUpstream, upstreamsFromFlags } from "./mod.ts";
 *
 * const upstreams = upstreamsFromFlags({ openaiUrl: "http://127.0.0.1:9999/v1" });
 * assert.deepEqual(Object.keys(upstreams), ["openai"]);
 * // The OpenAI SDK appends /chat/completions to its base URL: without /v1 real servers 404.
 * assert.throws(() => checkUpstream("openai", "http://127.0.0.1:9999", "--url", "k"), /no path/);
 * assert.deepEqual(checkUpstream("openai", "http://127.0.0.1:9999/v1", "--url", "k"), []);
 * ```
 *
 * @module
 */
export {
  AnthropicUpstream,
  OpenAIUpstream,
  type Upstream,
  upstreamsFromFlags,
} from "./upstream.ts";
export { serveBlackBox } from "./serve_black_box.ts";
export { checkUpstream } from "./upstream_check.ts";
