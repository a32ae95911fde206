/**
 * Turn answer → non-streaming Anthropic message (`stream: false`, and Claude Code's fallback
 * when a stream fails). The block list built here is also what `stream.ts` streams, so the two
 * forms cannot disagree on order, ids or signatures.
 *
 * @module
 */
import type { AnswerOptions, StopReason, TurnAnswer } from "../../../canonical/mod.ts";
import { argumentsObject } from "../tool_arguments.ts";

export type AnthropicStopReason = "end_turn" | "max_tokens" | "tool_use";

export type ResponseContentBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** Token counts as Anthropic reports them. */
export interface ResponseUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface MessageResponse {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ResponseContentBlock[];
  stop_reason: AnthropicStopReason;
  stop_sequence: null;
  usage: ResponseUsage;
}

/** stop → end_turn, length → max_tokens, tool_calls → tool_use. */
export function mapStopReason(reason: StopReason): AnthropicStopReason {
  switch (reason) {
    case "stop":
      return "end_turn";
    case "length":
      return "max_tokens";
    case "tool_calls":
      return "tool_use";
  }
}

/** The message id for a turn: `msg_` + the gateway's turn id (an answer or its header). */
export function messageId(answer: Pick<TurnAnswer, "id">): string {
  return `msg_${answer.id}`;
}

/**
 * The thinking `signature`. Clients echo it verbatim but the gateway never verifies it; carrying
 * the turn id makes an echoed thinking block traceable to the turn that produced it.
 */
export function thinkingSignature(answer: Pick<TurnAnswer, "id">): string {
  return `rollgate:${answer.id}`;
}

/**
 * `input_tokens` is the full prompt, cached part included, and the cache fields are 0: Claude
 * Code adds input + cache_read + cache_creation to decide when to compact, so reporting the
 * bridged prefix as `cache_read_input_tokens` as well would count it twice.
 */
export function responseUsage(answer: TurnAnswer): ResponseUsage {
  return usageOf(answer.usage.input_tokens, answer.usage.output_tokens);
}

/** `ResponseUsage` from the prompt and output token counts (cache fields 0, see above). */
export function usageOf(inputTokens: number, outputTokens: number): ResponseUsage {
  return {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

/** The answer's blocks in Anthropic order: thinking, text, then one tool_use per call. */
export function responseContent(answer: TurnAnswer): ResponseContentBlock[] {
  const { message } = answer;
  const blocks: ResponseContentBlock[] = [];
  if (message.reasoning_content) {
    blocks.push({
      type: "thinking",
      thinking: message.reasoning_content,
      signature: thinkingSignature(answer),
    });
  }
  if (message.content) blocks.push({ type: "text", text: message.content });
  for (const call of message.tool_calls ?? []) {
    blocks.push({
      type: "tool_use",
      id: call.id,
      name: call.name,
      input: argumentsObject(call.arguments),
    });
  }
  return blocks;
}

/** The non-streaming response body. `request` is unused: everything comes from the answer. */
export function toMessageResponse(
  answer: TurnAnswer,
  _request?: AnswerOptions,
): MessageResponse {
  return {
    id: messageId(answer),
    type: "message",
    role: "assistant",
    model: answer.model,
    content: responseContent(answer),
    stop_reason: mapStopReason(answer.stopReason),
    stop_sequence: null,
    usage: responseUsage(answer),
  };
}
