/**
 * The SSE events of a turn's answer for one client: streamed piece by piece while the backend
 * generates (when it streams), or all at once when the answer arrives complete (the trainer
 * completed in one call, or the client is a retry of a finished turn).
 *
 * @module
 */
import type { AnswerOptions } from "../../canonical/mod.ts";
import type { Turn } from "../../trajectory/mod.ts";
import type { ProtocolAdapter, SseEvent } from "../protocol.ts";

/** The events in batches: what is ready at once goes out in one write. */
export async function* answerEvents(
  adapter: ProtocolAdapter,
  turn: Turn,
  req: AnswerOptions,
): AsyncIterable<readonly SseEvent[]> {
  const pieces = turn.live?.[Symbol.asyncIterator]();
  let piece = pieces ? await pieces.next() : { done: true as const, value: undefined };
  if (piece.done) {
    yield adapter.toStreamEvents(await turn.result, req);
    return;
  }
  const encoder = adapter.streamEncoder(turn.header!, req);
  yield encoder.start();
  for (; !piece.done; piece = await pieces!.next()) {
    const { kind, delta } = piece.value;
    yield kind === "reasoning" ? encoder.reasoning(delta) : encoder.text(delta);
  }
  yield encoder.finish(await turn.result);
}
