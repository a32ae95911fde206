/**
 * Google's Gemini `generateContent` wire protocol (`POST /v1beta/models/<model>:generateContent`,
 * `:streamGenerateContent?alt=sse`, `:countTokens`), as the Gemini CLI speaks it. Pure
 * conversions, no I/O: the route turns its URL and body into a call (`requestOf`: the model and
 * the method are in the path), validates and converts it with `parseRequest`, runs the turn, and
 * serialises the `TurnAnswer` with `toResponseBody` or `toStreamEvents`, or streams it as it is
 * generated through `streamEncoder`. The reasoning rides in the `thoughtSignature` the client
 * echoes (`thought_signature.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { geminiAdapter } from "./mod.ts";
 * import type { TurnAnswer } from "../../../canonical/mod.ts";
 *
 * const url = new URL("http://gw/v1beta/models/policy:streamGenerateContent?alt=sse");
 * const body = { contents: [{ role: "user", parts: [{ text: "list the files" }] }] };
 * const request = geminiAdapter.parseRequest(geminiAdapter.requestOf!(url, body));
 * assert.equal(request.model, "policy");
 * assert.equal(request.stream, true);
 * assert.deepEqual(request.messages, [{ role: "user", content: "list the files" }]);
 * const answer: TurnAnswer = {
 *   id: "t1",
 *   model: "policy",
 *   message: { role: "assistant", content: "Here they are.", reasoning_content: "Let me look." },
 *   stopReason: "stop",
 *   usage: { input_tokens: 9, output_tokens: 7, reasoning_tokens: 3, cached_tokens: 0 },
 *   created: 0,
 * };
 * const chunks = geminiAdapter.toStreamEvents(answer, request).map((e) => JSON.parse(e.data));
 * assert.equal(chunks[0].candidates[0].content.parts[0].thought, true);
 * assert.equal(chunks.at(-1).candidates[0].finishReason, "STOP");
 * assert.equal(chunks.at(-1).usageMetadata.thoughtsTokenCount, 3);
 * // The client sends the answer back without its thought part; the signature brings it back.
 * const signed = chunks.flatMap((c) => c.candidates[0].content.parts)
 *   .find((p) => p.thoughtSignature);
 * const echoed = geminiAdapter.parseRequest(geminiAdapter.requestOf!(url, {
 *   contents: [...body.contents, { role: "model", parts: [{ ...signed, text: "Here they are." }] }],
 * }));
 * assert.equal(echoed.messages[1].role === "assistant" && echoed.messages[1].reasoning_content, "Let me look.");
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../../protocol.ts";
import { errorBody } from "./errors.ts";
import { type GeminiCall, geminiCall } from "./gemini_call.ts";
import { toGenerateContentResponse } from "./response.ts";
import { KEEP_ALIVE, streamEncoder, streamErrorEvents, toStreamEvents } from "./stream.ts";
import { readGeminiHistory, toCanonicalRequest } from "./to_canonical.ts";

export { geminiCall } from "./gemini_call.ts";
export { toCanonicalCountTokensRequest } from "./to_canonical.ts";

/** The Gemini protocol; the gateway mints `call_…` function-call ids for it. */
export const geminiAdapter: ProtocolAdapter = {
  name: "gemini",
  toolCallIdPrefix: "call_",
  requestOf: geminiCall,
  parseRequest: (call) => toCanonicalRequest(call as GeminiCall),
  history: { field: "contents", read: (call) => readGeminiHistory(call as GeminiCall) },
  toResponseBody: toGenerateContentResponse,
  toStreamEvents,
  streamEncoder,
  errorBody,
  streamErrorEvents,
  keepAlive: KEEP_ALIVE,
};
