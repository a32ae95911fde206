/**
 * Test helper: the recorded pi 0.73.1 traffic (`__fixtures__/pi-0.73.1.jsonl`) and the recorded
 * replies as canonical `TurnAnswer`s, so tests can compare what this module produces with what pi
 * was seen accepting. Reads a file, so only tests import it.
 *
 * @module
 */
import { parseSseText } from "../../../generation/mod.ts";
import type { ToolCall, TurnAnswer } from "../../../canonical/mod.ts";

/** One recorded request/response pair (only the fields the tests use). */
export interface PiRecord {
  body: Record<string, unknown>;
  reply: {
    plan: "tool" | "text";
    content: string;
    reasoning_content: string;
    tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  };
  response: { events: string[] };
}

const FIXTURE = new URL("./__fixtures__/pi-0.73.1.jsonl", import.meta.url);

export function loadPiRecords(): PiRecord[] {
  return Deno.readTextFileSync(FIXTURE)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** The JSON of an SSE event recorded as `data: {…}`; `null` for `data: [DONE]`. */
export function recordedChunk(event: string): Record<string, unknown> | null {
  const { data } = parseSseText(`${event}\n\n`).events[0];
  return data === "[DONE]" ? null : JSON.parse(data);
}

/**
 * The recorded reply as the answer the gateway would have produced: id, created and model are
 * taken from the recorded chunks, usage from the recorded usage chunk.
 */
export function recordedAnswer(record: PiRecord): TurnAnswer {
  const chunks = record.response.events.map(recordedChunk).filter((c) => c !== null);
  const first = chunks[0] as { id: string; created: number; model: string };
  const usage = chunks.at(-1)?.usage as { prompt_tokens: number; completion_tokens: number };
  const toolCalls: ToolCall[] = (record.reply.tool_calls ?? []).map((call) => ({
    id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
  }));
  return {
    id: first.id.replace(/^chatcmpl-/, ""),
    model: first.model,
    created: first.created,
    message: {
      role: "assistant",
      content: record.reply.content,
      reasoning_content: record.reply.reasoning_content,
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
    },
    stopReason: toolCalls.length ? "tool_calls" : "stop",
    usage: {
      input_tokens: usage.prompt_tokens,
      output_tokens: usage.completion_tokens,
      reasoning_tokens: 0,
      cached_tokens: 0,
    },
  };
}
