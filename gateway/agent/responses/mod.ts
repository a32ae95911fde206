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
 * import assert from "node:assert/strict";
 * import { responsesAdapter } from "./mod.ts";
 * import type { TurnAnswer } from "../../../canonical/mod.ts";
 *
 * const request = responsesAdapter.parseRequest({ model: "policy", stream: true, input: "hi" });
 * assert.deepEqual(request.messages, [{ role: "user", content: "hi" }]);
 * const answer: TurnAnswer = {
 *   id: "t1",
 *   model: "policy",
 *   message: { role: "assistant", content: "hello" },
 *   stopReason: "stop",
 *   usage: { input_tokens: 9, output_tokens: 2, reasoning_tokens: 0, cached_tokens: 0 },
 *   created: 0,
 * };
 * const events = responsesAdapter.toStreamEvents(answer, request).map((e) => e.event);
 * assert.equal(events[0], "response.created");
 * assert.equal(events.at(-1), "response.completed");
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../../protocol.ts";
import { errorBody } from "./errors.ts";
import { toResponseObject } from "./response.ts";
import { streamEncoder, streamErrorEvents, toStreamEvents } from "./stream.ts";
import { readResponsesHistory, toCanonicalRequest } from "./to_canonical.ts";

export { toCanonicalRequest } from "./to_canonical.ts";

/** The Responses protocol as the gateway's routes use it. */
export const responsesAdapter: ProtocolAdapter = {
  name: "responses",
  toolCallIdPrefix: "call_",
  parseRequest: toCanonicalRequest,
  history: { field: "input", read: readResponsesHistory },
  toResponseBody: toResponseObject,
  toStreamEvents,
  streamEncoder,
  errorBody,
  streamErrorEvents,
};
