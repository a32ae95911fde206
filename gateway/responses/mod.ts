/**
 * The OpenAI Responses wire protocol (`POST /v1/responses`), the only protocol Codex speaks.
 * Pure conversions between Responses bodies/events and the canonical types of
 * `model/messages.ts`; the HTTP route does the I/O.
 *
 * Codex always streams and fails the turn unless the stream ends with `response.completed`, so
 * send {@link toStreamEvents} whole (or {@link streamErrorEvents} if something breaks mid-stream).
 *
 * @example
 * ```ts
 * import { responsesAdapter } from "./gateway/responses/mod.ts";
 *
 * const request = responsesAdapter.parseRequest(body); // throws InvalidRequestError → 400
 * const answer = await runTurn(request); // your TurnAnswer; mint tool-call ids with "call_"
 * if (request.stream) {
 *   for (const e of responsesAdapter.toStreamEvents(answer, request)) {
 *     write(`event: ${e.event}\ndata: ${e.data}\n\n`);
 *   }
 * } else {
 *   reply(200, responsesAdapter.toResponseBody(answer, request));
 * }
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../protocol.ts";
import { errorBody } from "./errors.ts";
import { toResponseObject } from "./response.ts";
import { streamErrorEvents, toStreamEvents } from "./stream.ts";
import { toCanonicalRequest } from "./to_canonical.ts";

export { errorBody, errorType } from "./errors.ts";
export type { ErrorBody } from "./errors.ts";
export { toolCallItem, toOutputItems, toResponseObject, toResponsesUsage } from "./response.ts";
export type { OutputItem, ResponseObject, ResponsesUsage } from "./response.ts";
export { chunkText, DELTA_CHUNK_SIZE, streamErrorEvents, toStreamEvents } from "./stream.ts";
export { contentText, CUSTOM_TOOL_PARAMETERS, toCanonicalRequest } from "./to_canonical.ts";
export { parseResponsesRequest } from "./schema.ts";
export type { ResponsesRequest } from "./schema.ts";

/** The Responses protocol as the gateway's routes use it. */
export const responsesAdapter: ProtocolAdapter = {
  name: "responses",
  toolCallIdPrefix: "call_",
  parseRequest: toCanonicalRequest,
  toResponseBody: toResponseObject,
  toStreamEvents,
  errorBody,
  streamErrorEvents,
};
