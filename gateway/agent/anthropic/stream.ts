/**
 * Turn answer → the SSE events of a streamed Anthropic message, either as it is generated
 * (`streamEncoder`) or all at once for a complete answer (`toStreamEvents`, which drives the same
 * encoder, so both forms emit the same events).
 *
 * The sequence follows the one recorded with Claude Code 2.1.330 (`__fixtures__/`):
 * `message_start`, `ping`, per block `content_block_start` / deltas / `content_block_stop`,
 * `message_delta`, `message_stop`. Each event carries an `event:` line: without it Claude Code
 * reports a malformed response. Content goes into deltas, never into `content_block_start`:
 * Claude Code ignores content there (a tool would run with `{}`). Long text is split into deltas
 * as `../text_deltas.ts` says.
 *
 * @module
 */
import {
  type AnswerHeader,
  answerHeader,
  type AnswerOptions,
  type TurnAnswer,
} from "../../../canonical/mod.ts";
import type { AnswerStreamEncoder, SseEvent } from "../../protocol.ts";
import { splitDeltas, unsentText } from "../text_deltas.ts";
import { wholeAnswerEvents } from "../whole_answer.ts";

import { errorBody } from "./errors.ts";
import {
  mapStopReason,
  messageId,
  responseContent,
  type ResponseContentBlock,
  thinkingSignature,
  usageOf,
} from "./response.ts";

/** The complete event sequence for an answer, `message_stop` last. */
export function toStreamEvents(answer: TurnAnswer, request?: AnswerOptions): SseEvent[] {
  return wholeAnswerEvents(streamEncoder(answerHeader(answer), request), answer);
}

/** A streamed block: its index and what its deltas have sent so far. */
interface OpenBlock {
  index: number;
  sent: string;
}

/**
 * An encoder for an answer streamed as it is generated. Blocks are numbered in the order they
 * open: thinking (opened by the first non-empty reasoning delta), text (opened by the first
 * non-empty text delta, which first closes the thinking block with its `signature_delta`), then
 * in `finish` the rest of both and one tool_use block per call. Empty deltas emit nothing.
 *
 * The streamed reasoning and text must be prefixes of the answer's; `finish` sends what follows
 * them. A part that breaks that contract is not repaired and does not throw: if what was streamed
 * is not a prefix of the final value, nothing more is sent for that part (the client keeps what it
 * has), and reasoning that arrives once the text block is open (by `reasoning()` or in `finish`)
 * is dropped, since a thinking block cannot follow text. After `finish`, every call emits nothing.
 * `request` is unused: everything comes from the header and the answer.
 */
export function streamEncoder(
  header: AnswerHeader,
  _request?: AnswerOptions,
): AnswerStreamEncoder {
  const signature = thinkingSignature(header);
  let nextIndex = 0;
  let thinking: OpenBlock | undefined;
  let thinkingClosed = false;
  let text: OpenBlock | undefined;
  let finished = false;

  const open = (block: ResponseContentBlock, out: SseEvent[]): OpenBlock => {
    const index = nextIndex++;
    out.push(event({ type: "content_block_start", index, content_block: block }));
    return { index, sent: "" };
  };
  const thinkingDeltas = (block: OpenBlock, delta: string, out: SseEvent[]) => {
    block.sent += delta;
    for (const piece of splitDeltas(delta)) {
      out.push(blockDelta(block.index, { type: "thinking_delta", thinking: piece }));
    }
  };
  const textDeltas = (block: OpenBlock, delta: string, out: SseEvent[]) => {
    block.sent += delta;
    for (const piece of splitDeltas(delta)) {
      out.push(blockDelta(block.index, { type: "text_delta", text: piece }));
    }
  };
  const closeThinking = (out: SseEvent[]) => {
    if (!thinking || thinkingClosed) return;
    thinkingClosed = true;
    out.push(
      blockDelta(thinking.index, { type: "signature_delta", signature }),
      event({ type: "content_block_stop", index: thinking.index }),
    );
  };

  return {
    start() {
      return [
        event({
          type: "message_start",
          message: {
            id: messageId(header),
            type: "message",
            role: "assistant",
            model: header.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            // output_tokens is 1 at the start, as the real API reports it.
            usage: usageOf(header.inputTokens, 1),
          },
        }),
        event({ type: "ping" }),
      ];
    },

    reasoning(delta) {
      if (finished || delta === "" || text) return [];
      const out: SseEvent[] = [];
      thinking ??= open({ type: "thinking", thinking: "", signature: "" }, out);
      thinkingDeltas(thinking, delta, out);
      return out;
    },

    text(delta) {
      if (finished || delta === "") return [];
      const out: SseEvent[] = [];
      closeThinking(out);
      text ??= open({ type: "text", text: "" }, out);
      textDeltas(text, delta, out);
      return out;
    },

    finish(answer) {
      if (finished) return [];
      finished = true;
      const out: SseEvent[] = [];
      const { message } = answer;

      const reasoning = message.reasoning_content ?? "";
      if (!thinking && !text && reasoning !== "") {
        thinking = open({ type: "thinking", thinking: "", signature: "" }, out);
      }
      if (thinking && !thinkingClosed) {
        thinkingDeltas(thinking, unsentText(reasoning, thinking.sent), out);
      }
      closeThinking(out);

      if (!text && message.content !== "") text = open({ type: "text", text: "" }, out);
      if (text) {
        textDeltas(text, unsentText(message.content, text.sent), out);
        out.push(event({ type: "content_block_stop", index: text.index }));
      }

      // tool_use blocks come in tool_calls order; their deltas send the arguments string as the
      // model wrote it, not the re-serialised `input`.
      const args = (message.tool_calls ?? []).map((call) => call.arguments);
      for (const block of responseContent(answer)) {
        if (block.type === "tool_use") {
          out.push(...toolUseEvents(nextIndex++, block, args.shift()!));
        }
      }

      out.push(
        event({
          type: "message_delta",
          delta: { stop_reason: mapStopReason(answer.stopReason), stop_sequence: null },
          usage: { output_tokens: answer.usage.output_tokens },
        }),
        event({ type: "message_stop" }),
      );
      return out;
    },
  };
}

function blockDelta(index: number, delta: Record<string, string>): SseEvent {
  return event({ type: "content_block_delta", index, delta });
}

function toolUseEvents(
  index: number,
  block: Extract<ResponseContentBlock, { type: "tool_use" }>,
  args: string,
): SseEvent[] {
  return [
    event({ type: "content_block_start", index, content_block: { ...block, input: {} } }),
    // The real API opens every tool input with an empty partial_json; so does the fixture.
    blockDelta(index, { type: "input_json_delta", partial_json: "" }),
    ...splitDeltas(args).map((partial_json) =>
      blockDelta(index, { type: "input_json_delta", partial_json })
    ),
    event({ type: "content_block_stop", index }),
  ];
}

/** An `error` event for a failure after the stream has started (HTTP status already sent). */
export function streamErrorEvents(status: number, message: string): SseEvent[] {
  return [event(errorBody(status, message))];
}

function event<T extends { type: string }>(data: T): SseEvent {
  return { event: data.type, data: JSON.stringify(data) };
}
