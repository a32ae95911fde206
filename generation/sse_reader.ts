/**
 * Reading server-sent events, for the product (an engine's streamed answer) and the tests (what
 * the gateway streamed) alike, with `eventsource-parser`: events end at a blank line of `\n`,
 * `\r\n` or `\r`; the `data:` lines of one event join with `\n`; comment lines (`: keep-alive`)
 * are not events.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSseText } from "./sse_reader.ts";
 *
 * const { events, comments } = parseSseText(
 *   ": keep-alive\r\n\r\nevent: delta\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\ndata: [DONE]\n\n",
 * );
 * assert.deepEqual(events.map((e) => [e.event, e.data]), [
 *   ["delta", '{"a":\n1}'],
 *   [undefined, "[DONE]"],
 * ]);
 * assert.deepEqual(comments, ["keep-alive"]);
 * ```
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { EventSourceParserStream } from "eventsource-parser/stream";

/** One event: its `event:` name (unset for the default `message`), its joined `data:`. */
export type SseMessage = EventSourceMessage;

/** The events of a streamed body, as they arrive. */
export function sseMessages(body: ReadableStream<Uint8Array>): ReadableStream<SseMessage> {
  return body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
}

/** The events and comment lines of a whole SSE text (what a test read from a response). */
export function parseSseText(raw: string): { events: SseMessage[]; comments: string[] } {
  const events: SseMessage[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (e) => events.push(e),
    onComment: (c) => comments.push(c),
  });
  parser.feed(raw);
  // A last event without its closing blank line still counts (a body cut short).
  parser.feed("\n\n");
  return { events, comments };
}
