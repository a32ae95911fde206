/**
 * Canonical answer → the SSE chunks of a streamed chat completion.
 *
 * The sequence copies what pi 0.73.1 was recorded accepting (`__fixtures__/pi-0.73.1.jsonl`): a
 * role chunk, `reasoning_content` deltas, `content` deltas, per tool call a header fragment (id,
 * type, name, empty arguments) followed by argument fragments, a chunk carrying only
 * `finish_reason`, the usage chunk with `choices: []` when `stream_options.include_usage` was
 * asked, and `data: [DONE]`. Chat streams have `data:` lines only, hence no `event` field.
 *
 * {@linkcode streamEncoder} emits that sequence for an answer that arrives piece by piece;
 * {@linkcode toStreamEvents} runs the same encoder over a complete answer, so both paths produce
 * the same chunks. Long deltas are split as `../text_deltas.ts` says.
 *
 * @module
 */
import {
  type AnswerHeader,
  answerHeader,
  type AnswerOptions,
  type ToolCall,
  type TurnAnswer,
} from "../../../canonical/mod.ts";
import type { AnswerStreamEncoder, SseEvent } from "../../protocol.ts";
import { splitDeltas, unsentText } from "../text_deltas.ts";
import { wholeAnswerEvents } from "../whole_answer.ts";
import { errorBody } from "./errors.ts";
import { completionId, customToolInput, mapFinishReason, toChatUsage } from "./response.ts";

/** The terminal data line every Chat stream ends with. */
export const DONE: SseEvent = { data: "[DONE]" };

/** The deltas of one tool call: a header fragment, then the arguments (or custom input) piecewise. */
function toolCallDeltas(call: ToolCall, index: number): Record<string, unknown>[] {
  if (call.kind === "custom") {
    const input = customToolInput(call.arguments);
    return [
      { index, id: call.id, type: "custom", custom: { name: call.name, input: "" } },
      ...splitDeltas(input).map((piece) => ({ index, custom: { input: piece } })),
    ];
  }
  return [
    { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
    ...splitDeltas(call.arguments).map((piece) => ({ index, function: { arguments: piece } })),
  ];
}

/**
 * An encoder for an answer streamed as it is generated (see `AnswerStreamEncoder` for the call
 * order). Every chunk carries the header's id (`chatcmpl-<id>`), `created` and `model`; the header's
 * token counts are not needed because Chat reports usage only in the final chunk.
 *
 * `finish(answer)` sends whatever part of `answer.message.reasoning_content` and
 * `answer.message.content` was not streamed yet. Should a streamed prefix turn out not to be a
 * prefix of the final text (a producer bug: the contract forbids it), nothing more is sent for
 * that part and no error is thrown: what the client already has cannot be taken back, and the rest
 * of the turn (tool calls, finish reason, usage, `[DONE]`) is still worth delivering. Deltas that
 * arrive out of the documented order (reasoning after text) are forwarded as they come.
 */
export function streamEncoder(
  header: AnswerHeader,
  request: AnswerOptions,
): AnswerStreamEncoder {
  const envelope = {
    id: completionId(header),
    object: "chat.completion.chunk",
    created: header.created,
    model: header.model,
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): SseEvent => ({
    data: JSON.stringify({
      ...envelope,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    }),
  });
  /** The reasoning and text sent so far, to work out what `finish` still owes. */
  let sentReasoning = "";
  let sentText = "";
  const reasoning = (delta: string): SseEvent[] => {
    sentReasoning += delta;
    return splitDeltas(delta).map((piece) => chunk({ reasoning_content: piece }));
  };
  const text = (delta: string): SseEvent[] => {
    sentText += delta;
    return splitDeltas(delta).map((piece) => chunk({ content: piece }));
  };

  return {
    start: () => [chunk({ role: "assistant", content: "" })],
    reasoning,
    text,
    finish(answer: TurnAnswer): SseEvent[] {
      const { content, reasoning_content: fullReasoning = "", tool_calls: calls = [] } =
        answer.message;
      const events: SseEvent[] = [
        ...reasoning(unsentText(fullReasoning, sentReasoning)),
        ...text(unsentText(content, sentText)),
        ...calls.flatMap((call, i) =>
          toolCallDeltas(call, i).map((d) => chunk({ tool_calls: [d] }))
        ),
        chunk({}, mapFinishReason(answer.stopReason)),
      ];
      if (request.includeUsage) {
        events.push({
          data: JSON.stringify({ ...envelope, choices: [], usage: toChatUsage(answer.usage) }),
        });
      }
      events.push(DONE);
      return events;
    },
  };
}

/** The complete event sequence for a streamed answer, `[DONE]` last: the encoder run in one go. */
export function toStreamEvents(answer: TurnAnswer, request: AnswerOptions): SseEvent[] {
  return wholeAnswerEvents(streamEncoder(answerHeader(answer), request), answer);
}

/**
 * Reports an error after the 200 and the first chunks have gone out: OpenAI's SDKs throw on a
 * chunk that carries `error`. `[DONE]` follows so clients that wait for it stop reading.
 */
export function streamErrorEvents(status: number, message: string): SseEvent[] {
  return [{ data: JSON.stringify(errorBody(status, message)) }, DONE];
}
