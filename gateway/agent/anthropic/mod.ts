/**
 * The Anthropic Messages wire protocol (`POST /v1/messages`, `/v1/messages/count_tokens`), as
 * Claude Code speaks it. Pure conversions, no I/O: the HTTP route validates a body with
 * `parseRequest`, runs the turn, and serialises the `TurnAnswer` with `toResponseBody` or
 * `toStreamEvents`, or streams it as it is generated through `streamEncoder`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { anthropicAdapter } from "./mod.ts";
 * import type { TurnAnswer } from "../../../canonical/mod.ts";
 *
 * const request = anthropicAdapter.parseRequest({
 *   model: "policy-model-v1",
 *   max_tokens: 1024,
 *   stream: true,
 *   messages: [{ role: "user", content: "list the files" }],
 * });
 * assert.deepEqual(request.messages, [{ role: "user", content: "list the files" }]);
 * const answer: TurnAnswer = {
 *   id: "t1",
 *   model: "policy-model-v1",
 *   message: { role: "assistant", content: "Here they are.", reasoning_content: "Let me look." },
 *   stopReason: "stop",
 *   usage: { input_tokens: 9, output_tokens: 7, reasoning_tokens: 3, cached_tokens: 0 },
 *   created: 0,
 * };
 * // The whole answer at once (or piece by piece with `streamEncoder`):
 * const events = anthropicAdapter.toStreamEvents(answer, request);
 * assert.equal(events[0].event, "message_start");
 * assert.equal(events.at(-1)!.event, "message_stop");
 * assert.ok(events.some((e) => e.data.includes('"thinking_delta"')));
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../../protocol.ts";
import { errorBody } from "./errors.ts";
import { toMessageResponse } from "./response.ts";
import { streamEncoder, streamErrorEvents, toStreamEvents } from "./stream.ts";
import { readMessagesHistory, toCanonicalRequest } from "./to_canonical.ts";

export { toCanonicalCountTokensRequest, toCanonicalRequest } from "./to_canonical.ts";

/** The Anthropic Messages protocol; the gateway mints `toolu_…` tool-call ids for it. */
export const anthropicAdapter: ProtocolAdapter = {
  name: "anthropic",
  toolCallIdPrefix: "toolu_",
  parseRequest: toCanonicalRequest,
  history: { field: "messages", read: readMessagesHistory },
  toResponseBody: toMessageResponse,
  toStreamEvents,
  streamEncoder,
  errorBody,
  streamErrorEvents,
};
