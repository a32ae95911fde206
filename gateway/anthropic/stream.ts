/**
 * Turn answer → the SSE events of a streamed Anthropic message.
 *
 * The answer is complete before streaming starts, so the whole sequence is produced at once.
 * It follows the sequence recorded with Claude Code 2.1.330 (`__fixtures__/`): `message_start`,
 * `ping`, per block `content_block_start` / deltas / `content_block_stop`, `message_delta`,
 * `message_stop`. Each event carries an `event:` line: without it Claude Code reports a
 * malformed response. Content goes into deltas, never into `content_block_start`: Claude Code
 * ignores content there (a tool would run with `{}`). Text is split into a few deltas, as a real
 * stream would be.
 *
 * @module
 */
import type { CanonicalRequest, TurnAnswer } from "../../model/messages.ts";
import type { SseEvent } from "../protocol.ts";
import { errorBody } from "./errors.ts";
import {
  mapStopReason,
  messageId,
  responseContent,
  type ResponseContentBlock,
  responseUsage,
} from "./response.ts";

/** Largest delta, in code points. */
const CHUNK = 64;

/** The complete event sequence for an answer, `message_stop` last. */
export function toStreamEvents(answer: TurnAnswer, _request?: CanonicalRequest): SseEvent[] {
  const events: SseEvent[] = [
    event({
      type: "message_start",
      message: {
        id: messageId(answer),
        type: "message",
        role: "assistant",
        model: answer.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // output_tokens is 1 at the start, as the real API reports it.
        usage: { ...responseUsage(answer), output_tokens: 1 },
      },
    }),
    event({ type: "ping" }),
  ];
  // tool_use blocks come in tool_calls order; their deltas send the arguments string as the
  // model wrote it, not the re-serialised `input`.
  const args = (answer.message.tool_calls ?? []).map((call) => call.arguments);
  responseContent(answer).forEach((block, index) => {
    events.push(...blockEvents(index, block, block.type === "tool_use" ? args.shift()! : ""));
  });
  events.push(
    event({
      type: "message_delta",
      delta: { stop_reason: mapStopReason(answer.stopReason), stop_sequence: null },
      usage: { output_tokens: answer.usage.output_tokens },
    }),
    event({ type: "message_stop" }),
  );
  return events;
}

function blockEvents(index: number, block: ResponseContentBlock, args: string): SseEvent[] {
  const delta = (d: Record<string, string>) =>
    event({ type: "content_block_delta", index, delta: d });
  const start = (b: ResponseContentBlock) =>
    event({ type: "content_block_start", index, content_block: b });
  const middle: SseEvent[] = [];
  switch (block.type) {
    case "thinking":
      middle.push(
        start({ ...block, thinking: "", signature: "" }),
        ...splitChunks(block.thinking).map((thinking) =>
          delta({ type: "thinking_delta", thinking })
        ),
        delta({ type: "signature_delta", signature: block.signature }),
      );
      break;
    case "text":
      middle.push(
        start({ ...block, text: "" }),
        ...splitChunks(block.text).map((text) => delta({ type: "text_delta", text })),
      );
      break;
    case "tool_use":
      middle.push(
        start({ ...block, input: {} }),
        // The real API opens every tool input with an empty partial_json; so does the fixture.
        delta({ type: "input_json_delta", partial_json: "" }),
        ...splitChunks(args).map((partial_json) =>
          delta({ type: "input_json_delta", partial_json })
        ),
      );
      break;
  }
  return [...middle, event({ type: "content_block_stop", index })];
}

/** An `error` event for a failure after the stream has started (HTTP status already sent). */
export function streamErrorEvents(status: number, message: string): SseEvent[] {
  return [event(errorBody(status, message))];
}

function event<T extends { type: string }>(data: T): SseEvent {
  return { event: data.type, data: JSON.stringify(data) };
}

/**
 * Splits text into pieces of at most `max` code points (never inside a surrogate pair), cutting
 * after the last whitespace of a piece when there is one. Concatenating the pieces gives `text`.
 */
export function splitChunks(text: string, max = CHUNK): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = Math.min(start + max, chars.length);
    if (end < chars.length) {
      for (let cut = end; cut > start + 1; cut--) {
        if (/\s/.test(chars[cut - 1])) {
          end = cut;
          break;
        }
      }
    }
    pieces.push(chars.slice(start, end).join(""));
    start = end;
  }
  return pieces;
}
