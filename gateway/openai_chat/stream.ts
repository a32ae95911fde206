/**
 * Canonical answer → the SSE chunks of a streamed chat completion.
 *
 * The sequence copies what pi 0.73.1 was recorded accepting (`__fixtures__/pi-0.73.1.jsonl`): a
 * role chunk, `reasoning_content` deltas, `content` deltas, per tool call a header fragment (id,
 * type, name, empty arguments) followed by argument fragments, a chunk carrying only
 * `finish_reason`, the usage chunk with `choices: []` when `stream_options.include_usage` was
 * asked, and `data: [DONE]`. Chat streams have `data:` lines only, hence no `event` field.
 *
 * The answer is complete before streaming starts, so chunking is cosmetic; it is kept because
 * clients are written for token-sized deltas and some mishandle one huge delta.
 *
 * @module
 */
import type { CanonicalRequest, ToolCall, TurnAnswer } from "../../model/messages.ts";
import type { SseEvent } from "../protocol.ts";
import { errorBody } from "./errors.ts";
import { completionId, customToolInput, mapFinishReason, toChatUsage } from "./response.ts";

/** Longest delta text, in code points. */
export const PIECE_SIZE = 64;

/** The terminal data line every Chat stream ends with. */
export const DONE: SseEvent = { data: "[DONE]" };

/**
 * Splits text into pieces of at most `size` code points. Splitting by code point keeps surrogate
 * pairs together, so every piece is valid UTF-16 on its own (clients in other languages decode
 * each chunk separately). An empty string yields no pieces.
 */
export function splitPieces(text: string, size = PIECE_SIZE): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""));
  return pieces;
}

/** The deltas of one tool call: a header fragment, then the arguments (or custom input) piecewise. */
function toolCallDeltas(call: ToolCall, index: number): Record<string, unknown>[] {
  if (call.kind === "custom") {
    const input = customToolInput(call.arguments);
    return [
      { index, id: call.id, type: "custom", custom: { name: call.name, input: "" } },
      ...splitPieces(input).map((piece) => ({ index, custom: { input: piece } })),
    ];
  }
  return [
    { index, id: call.id, type: "function", function: { name: call.name, arguments: "" } },
    ...splitPieces(call.arguments).map((piece) => ({ index, function: { arguments: piece } })),
  ];
}

/** The complete event sequence for a streamed answer, `[DONE]` last. */
export function toStreamEvents(answer: TurnAnswer, request: CanonicalRequest): SseEvent[] {
  const envelope = {
    id: completionId(answer),
    object: "chat.completion.chunk",
    created: answer.created,
    model: answer.model,
  };
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): SseEvent => ({
    data: JSON.stringify({
      ...envelope,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    }),
  });

  const { content, reasoning_content: reasoning = "", tool_calls: calls = [] } = answer.message;
  const events: SseEvent[] = [
    chunk({ role: "assistant", content: "" }),
    ...splitPieces(reasoning).map((piece) => chunk({ reasoning_content: piece })),
    ...splitPieces(content).map((piece) => chunk({ content: piece })),
    ...calls.flatMap((call, i) => toolCallDeltas(call, i).map((d) => chunk({ tool_calls: [d] }))),
    chunk({}, mapFinishReason(answer.stopReason)),
  ];
  if (request.includeUsage) {
    events.push({
      data: JSON.stringify({ ...envelope, choices: [], usage: toChatUsage(answer.usage) }),
    });
  }
  events.push(DONE);
  return events;
}

/**
 * Reports an error after the 200 and the first chunks have gone out: OpenAI's SDKs throw on a
 * chunk that carries `error`. `[DONE]` follows so clients that wait for it stop reading.
 */
export function streamErrorEvents(status: number, message: string): SseEvent[] {
  return [{ data: JSON.stringify(errorBody(status, message)) }, DONE];
}
