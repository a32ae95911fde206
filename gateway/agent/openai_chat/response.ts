/**
 * Canonical answer → non-streaming `chat.completion` object. The streaming module reuses the
 * pieces that must agree between the two forms (usage, finish reason, custom-tool input).
 *
 * @module
 */
import type {
  AnswerOptions,
  StopReason,
  ToolCall,
  TurnAnswer,
  Usage,
} from "../../../canonical/mod.ts";

/** The `usage` object of a completion (and of the final stream chunk). */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/** A tool call in the response's `message.tool_calls`. */
export type ChatToolCall =
  | { id: string; type: "function"; function: { name: string; arguments: string } }
  | { id: string; type: "custom"; custom: { name: string; input: string } };

export interface ChatCompletionBody {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: [{
    index: 0;
    message: {
      role: "assistant";
      content: string | null;
      reasoning_content?: string;
      tool_calls?: ChatToolCall[];
    };
    finish_reason: string;
    logprobs: null;
  }];
  usage: ChatUsage;
}

/** The canonical stop reasons are Chat's own words; kept as a function so callers need not know. */
export function mapFinishReason(reason: StopReason): "stop" | "length" | "tool_calls" {
  return reason;
}

/**
 * Completion ids derive from the turn id so a replayed turn gets the same id. Takes an answer or
 * an `AnswerHeader` (same `id`).
 */
export function completionId(answer: Pick<TurnAnswer, "id">): string {
  return `chatcmpl-${answer.id}`;
}

export function toChatUsage(usage: Usage): ChatUsage {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens },
  };
}

/**
 * The raw text of a custom tool call. Canonically it is stored as `{"input": "…"}` (see
 * `to_canonical.ts`); if the arguments are not in that form they are passed through as they are
 * rather than lost.
 */
export function customToolInput(args: string): string {
  try {
    const parsed = JSON.parse(args);
    if (typeof parsed?.input === "string") return parsed.input;
  } catch {
    // not JSON: fall through
  }
  return args;
}

export function toChatToolCall(call: ToolCall): ChatToolCall {
  return call.kind === "custom"
    ? {
      id: call.id,
      type: "custom",
      custom: { name: call.name, input: customToolInput(call.arguments) },
    }
    : { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } };
}

/** The `chat.completion` body for a non-streaming request. */
export function toChatCompletion(
  answer: TurnAnswer,
  _request?: AnswerOptions,
): ChatCompletionBody {
  const { content, reasoning_content: reasoning, tool_calls: calls } = answer.message;
  const hasCalls = calls !== undefined && calls.length > 0;
  return {
    id: completionId(answer),
    object: "chat.completion",
    created: answer.created,
    model: answer.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: content === "" && hasCalls ? null : content,
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        ...(hasCalls ? { tool_calls: calls.map(toChatToolCall) } : {}),
      },
      finish_reason: mapFinishReason(answer.stopReason),
      logprobs: null,
    }],
    usage: toChatUsage(answer.usage),
  };
}
