/**
 * The OpenAI Chat Completions wire protocol (`POST /v1/chat/completions`), as spoken by pi
 * (`api: "openai-completions"`) and other OpenAI-SDK clients. Pure conversions only: the HTTP route
 * validates with {@linkcode openaiChatAdapter.parseRequest}, runs the turn, and writes what
 * {@linkcode openaiChatAdapter.toResponseBody} or {@linkcode openaiChatAdapter.toStreamEvents}
 * return, or, when the answer is streamed as it is generated, what the encoder from
 * {@linkcode openaiChatAdapter.streamEncoder} emits.
 *
 * @example
 * ```ts ignore
 * import { openaiChatAdapter } from "./gateway/openai_chat/mod.ts";
 *
 * const request = openaiChatAdapter.parseRequest(await httpRequest.json()); // may throw InvalidRequestError
 * const answer = await runTurn(request); // a TurnAnswer
 * if (request.stream) {
 *   for (const { data } of openaiChatAdapter.toStreamEvents(answer, request)) {
 *     write(`data: ${data}\n\n`);
 *   }
 * } else {
 *   writeJson(openaiChatAdapter.toResponseBody(answer, request));
 * }
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../protocol.ts";
import { errorBody } from "./errors.ts";
import { toChatCompletion } from "./response.ts";
import { streamEncoder, streamErrorEvents, toStreamEvents } from "./stream.ts";
import { toCanonicalRequest } from "./to_canonical.ts";

export { toCanonicalRequest } from "./to_canonical.ts";

/** The Chat Completions protocol; tool-call ids it mints look like OpenAI's (`call_…`). */
export const openaiChatAdapter: ProtocolAdapter = {
  name: "chat",
  toolCallIdPrefix: "call_",
  parseRequest: toCanonicalRequest,
  toResponseBody: toChatCompletion,
  toStreamEvents,
  streamEncoder,
  errorBody,
  streamErrorEvents,
};
