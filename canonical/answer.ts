/**
 * A turn's answer in protocol-neutral words: what the turn runner hands the gateway, and what each
 * protocol module turns into its response (whole, or streamed after an {@link AnswerHeader}).
 *
 * @module
 */
import type { AssistantMessage } from "./messages.ts";

/** Why generation stopped, in protocol-neutral words. */
export type StopReason = "stop" | "length" | "tool_calls";

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  /** Tokens of the output that were reasoning (`<think>` content). */
  reasoning_tokens: number;
  /** Prompt tokens reused verbatim from earlier turns (the bridged prefix). */
  cached_tokens: number;
}

/** What a protocol module turns into its response: the parsed assistant turn. */
export interface TurnAnswer {
  /** Gateway id of the turn; protocols derive their message/response ids from it. */
  id: string;
  model: string;
  message: AssistantMessage;
  stopReason: StopReason;
  usage: Usage;
  /** Unix seconds. */
  created: number;
}

/** What is known of an answer before its first token: enough for the opening events. */
export interface AnswerHeader {
  /** Same as the final `TurnAnswer.id`. */
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
  /** Prompt tokens (the full prompt, as in `Usage.input_tokens`) and the part reused verbatim. */
  inputTokens: number;
  cachedTokens: number;
}

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
