/**
 * Test helpers for the recorded Claude Code 2.1.330 traffic in this folder (format:
 * `tests/recordings/README.md`): the two request records and their replies as `TurnAnswer`s.
 *
 * @module
 */
import { parseSseText } from "../../../../generation/mod.ts";
import type { TurnAnswer } from "../../../../canonical/mod.ts";

/** One reply block as the scripted model sent it. */
export type ReplyBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

export interface CaptureRecord {
  seq: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  reply: { plan: string; blocks: ReplyBlock[] };
  /** Each event as on the wire (`event: …\ndata: …`) minus the blank line. */
  response: { status: number; type: string; events: string[] };
}

const FILE = new URL("./claude-code-2.1.330.jsonl", import.meta.url);

/** Both records, parsed fresh on every call so tests may mutate them. */
export function loadCapture(): CaptureRecord[] {
  return Deno.readTextFileSync(FILE).split("\n").filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** `{event, data}` of a recorded event string. */
export function parseWireEvent(raw: string): { event: string; data: Record<string, unknown> } {
  const [e] = parseSseText(`${raw}\n\n`).events;
  if (e?.event === undefined) throw new Error(`not an SSE event: ${raw}`);
  return { event: e.event, data: JSON.parse(e.data) };
}

/**
 * The record's reply as a `TurnAnswer`, with the id, model and usage the recording served (taken
 * from its `message_start` / `message_delta`), so the events this module produces can be compared
 * with the recorded ones byte for byte.
 */
export function answerFromRecord(record: CaptureRecord): TurnAnswer {
  const events = record.response.events.map(parseWireEvent);
  // deno-lint-ignore no-explicit-any
  const start = events[0].data.message as any;
  // deno-lint-ignore no-explicit-any
  const delta = events.find((e) => e.event === "message_delta")!.data as any;
  const blocks = record.reply.blocks;
  const thinking = blocks.flatMap((b) => b.type === "thinking" ? [b.thinking] : []);
  const toolCalls = blocks.flatMap((b) =>
    b.type === "tool_use" ? [{ id: b.id, name: b.name, arguments: JSON.stringify(b.input) }] : []
  );
  return {
    id: start.id.replace(/^msg_/, ""),
    model: start.model,
    message: {
      role: "assistant",
      content: blocks.flatMap((b) => b.type === "text" ? [b.text] : []).join(""),
      ...(thinking.length > 0 ? { reasoning_content: thinking.join("\n") } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    },
    stopReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    usage: {
      input_tokens: start.usage.input_tokens,
      output_tokens: delta.usage.output_tokens,
      reasoning_tokens: 0,
      cached_tokens: 0,
    },
    created: 1_700_000_000,
  };
}
