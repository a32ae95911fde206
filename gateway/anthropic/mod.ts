/**
 * The Anthropic Messages wire protocol (`POST /v1/messages`, `/v1/messages/count_tokens`), as
 * Claude Code speaks it. Pure conversions, no I/O: the HTTP route validates a body with
 * `parseRequest`, runs the turn, and serialises the `TurnAnswer` with `toResponseBody` or
 * `toStreamEvents`, or streams it as it is generated through `streamEncoder`.
 *
 * @example
 * ```ts
 * import { anthropicAdapter } from "./mod.ts";
 * import type { TurnAnswer } from "../../canonical/mod.ts";
 * import type { SseEvent } from "../protocol.ts";
 * declare const answer: TurnAnswer; // what the turn produced for `request`
 * declare function write(events: SseEvent[]): void;
 *
 * const request = anthropicAdapter.parseRequest({
 *   model: "policy-model-v1",
 *   max_tokens: 1024,
 *   stream: true,
 *   messages: [{ role: "user", content: "list the files" }],
 * });
 * // The whole answer at once:
 * write(anthropicAdapter.toStreamEvents(answer, request));
 * // Or, as the answer is generated (reasoning pieces first, then text):
 * const encoder = anthropicAdapter.streamEncoder({ ...answer, inputTokens: 9, cachedTokens: 0 }, request);
 * write(encoder.start());
 * write(encoder.reasoning("Let me look."));
 * write(encoder.text("Here they are."));
 * write(encoder.finish(answer));
 * ```
 *
 * @module
 */
import type { ProtocolAdapter } from "../protocol.ts";
import { errorBody } from "./errors.ts";
import { toMessageResponse } from "./response.ts";
import { streamEncoder, streamErrorEvents, toStreamEvents } from "./stream.ts";
import { toCanonicalRequest } from "./to_canonical.ts";

export { toCanonicalCountTokensRequest, toCanonicalRequest } from "./to_canonical.ts";

/** The Anthropic Messages protocol; the gateway mints `toolu_…` tool-call ids for it. */
export const anthropicAdapter: ProtocolAdapter = {
  name: "anthropic",
  toolCallIdPrefix: "toolu_",
  parseRequest: toCanonicalRequest,
  toResponseBody: toMessageResponse,
  toStreamEvents,
  streamEncoder,
  errorBody,
  streamErrorEvents,
};
