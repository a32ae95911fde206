/**
 * A complete answer through a protocol's stream encoder: its header, and the whole event
 * sequence (start, all reasoning, all text, finish). Every protocol's `toStreamEvents` is this,
 * so complete and streamed answers share one code path.
 *
 * @module
 */
import type { TurnAnswer } from "../model/messages.ts";
import type { AnswerHeader, AnswerStreamEncoder, SseEvent } from "./protocol.ts";

/** What a complete answer tells of itself before its first token. */
export function answerHeader(answer: TurnAnswer): AnswerHeader {
  return {
    id: answer.id,
    model: answer.model,
    created: answer.created,
    inputTokens: answer.usage.input_tokens,
    cachedTokens: answer.usage.cached_tokens,
  };
}

/** The complete answer fed through `encoder` in one go, terminal event last. */
export function wholeAnswerEvents(encoder: AnswerStreamEncoder, answer: TurnAnswer): SseEvent[] {
  return [
    ...encoder.start(),
    ...encoder.reasoning(answer.message.reasoning_content ?? ""),
    ...encoder.text(answer.message.content ?? ""),
    ...encoder.finish(answer),
  ];
}
