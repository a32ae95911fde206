/**
 * The OpenAI Chat Completions wire protocol (`POST /v1/chat/completions`), as spoken by pi
 * (`api: "openai-completions"`) and other OpenAI-SDK clients. Pure conversions only: the HTTP route
 * validates with {@linkcode openaiChatAdapter.parseRequest}, runs the turn, and writes what
 * {@linkcode openaiChatAdapter.toResponseBody} or {@linkcode openaiChatAdapter.toStreamEvents}
 * return, or, when the answer is streamed as it is generated, what the encoder from
 * {@linkcode openaiChatAdapter.streamEncoder} emits.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { openaiChatAdapter } from "./mod.ts";
 * import type { TurnAnswer } from "../../../canonical/mod.ts";
 *
 * const request = openaiChatAdapter.parseRequest({
 *   model: "policy",
 *   stream: true,
 *   messages: [{ role: "developer", content: "Be brief." }, { role: "user", content: "hi" }],
 * });
 * assert.equal(request.messages[0].role, "system"); // developer is system
 * const answer: TurnAnswer = {
 *   id: "t1",
 *   model: "policy",
 *   message: { role: "assistant", content: "hello" },
 *   stopReason: "stop",
 *   usage: { input_tokens: 9, output_tokens: 2, reasoning_tokens: 0, cached_tokens: 0 },
 *   created: 0,
 * };
 * const chunks = openaiChatAdapter.toStreamEvents(answer, request).map((e) => e.data);
 * assert.equal(chunks.at(-1), "[DONE]");
 * const body = openaiChatAdapter.toResponseBody(answer, request) as { object: string };
 * assert.equal(body.object, "chat.completion");
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../../protocol.ts";
import { errorBody } from "./errors.ts";
import { toChatCompletion } from "./response.ts";
import { streamEncoder, streamErrorEvents, toStreamEvents } from "./stream.ts";
import { readChatHistory, toCanonicalRequest } from "./to_canonical.ts";

export { toCanonicalRequest } from "./to_canonical.ts";

/** The Chat Completions protocol; tool-call ids it mints look like OpenAI's (`call_…`). */
export const openaiChatAdapter: ProtocolAdapter = {
  name: "chat",
  toolCallIdPrefix: "call_",
  parseRequest: toCanonicalRequest,
  history: { field: "messages", read: readChatHistory },
  toResponseBody: toChatCompletion,
  toStreamEvents,
  streamEncoder,
  errorBody,
  streamErrorEvents,
};
