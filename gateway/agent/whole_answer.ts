/**
 * A complete answer through a protocol's stream encoder: the whole event sequence (start, all reasoning, all text, finish). Every protocol's `toStreamEvents` is this,
 * so complete and streamed answers share one code path.
 *
 * @module
 */
import type { TurnAnswer } from "../../canonical/mod.ts";
import type { AnswerStreamEncoder, SseEvent } from "../protocol.ts";

/** The complete answer fed through `encoder` in one go, terminal event last. */
export function wholeAnswerEvents(encoder: AnswerStreamEncoder, answer: TurnAnswer): SseEvent[] {
  return [
    ...encoder.start(),
    ...encoder.reasoning(answer.message.reasoning_content ?? ""),
    ...encoder.text(answer.message.content ?? ""),
    ...encoder.finish(answer),
  ];
}
