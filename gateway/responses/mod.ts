/**
 * The OpenAI Responses wire protocol (`POST /v1/responses`), the only protocol Codex speaks.
 * Pure conversions between Responses bodies/events and the canonical types of
 * `canonical/`; the HTTP route does the I/O.
 *
 * Codex always streams and fails the turn unless the stream ends with `response.completed`: send
 * the events of {@link streamEncoder} as the answer is generated (or {@link toStreamEvents} whole
 * for a complete answer), and {@link streamErrorEvents} if something breaks mid-stream.
 *
 * @example
 * ```ts
 * import { responsesAdapter } from "./mod.ts";
 * import type { AnswerHeader, TurnAnswer } from "../../canonical/mod.ts";
 * import type { SseEvent } from "../protocol.ts";
 * declare const body: unknown; // the request body
 * declare const header: AnswerHeader; // id, model, created, token counts
 * declare function generate(): AsyncIterable<{ reasoning?: string; text?: string }>;
 * declare function runTurn(): Promise<TurnAnswer>; // mints tool-call ids with "call_"
 * declare function write(text: string): void;
 *
 * const request = responsesAdapter.parseRequest(body); // throws InvalidRequestError → 400
 * if (request.stream) {
 *   const send = (events: SseEvent[]) => {
 *     for (const e of events) write(`event: ${e.event}\ndata: ${e.data}\n\n`);
 *   };
 *   const encoder = responsesAdapter.streamEncoder(header, request);
 *   send(encoder.start());
 *   for await (const piece of generate()) { // reasoning first, then text
 *     send(piece.reasoning ? encoder.reasoning(piece.reasoning) : encoder.text(piece.text ?? ""));
 *   }
 *   send(encoder.finish(await runTurn()));
 * } else {
 *   write(JSON.stringify(responsesAdapter.toResponseBody(await runTurn(), request)));
 * }
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../protocol.ts";
import { errorBody } from "./errors.ts";
import { toResponseObject } from "./response.ts";
import { streamEncoder, streamErrorEvents, toStreamEvents } from "./stream.ts";
import { toCanonicalRequest } from "./to_canonical.ts";

export { toCanonicalRequest } from "./to_canonical.ts";

/** The Responses protocol as the gateway's routes use it. */
export const responsesAdapter: ProtocolAdapter = {
  name: "responses",
  toolCallIdPrefix: "call_",
  parseRequest: toCanonicalRequest,
  toResponseBody: toResponseObject,
  toStreamEvents,
  streamEncoder,
  errorBody,
  streamErrorEvents,
};
