/**
 * Test helpers over the recorded Codex 0.169.0 traffic (`codex-0.169.0.jsonl`, format in
 * `tests/recordings/README.md`): the request bodies, the recorded SSE events, and the
 * scripted reply turned back into the canonical answer that would have produced it.
 *
 * @module
 */
import { parseSseText } from "../../../../generation/mod.ts";
import type { TurnAnswer } from "../../../../canonical/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

export interface CodexRecord {
  body: Json;
  reply: { output: Json[] };
  /** Parsed SSE events: the `event:` name and the `data:` JSON. */
  events: { event: string; data: Json }[];
}

function parseEvent(raw: string): { event: string; data: Json } {
  const [e] = parseSseText(`${raw}\n\n`).events;
  if (e?.event === undefined) throw new Error(`bad fixture event: ${raw}`);
  return { event: e.event, data: JSON.parse(e.data) };
}

export function loadCodexRecords(): CodexRecord[] {
  const text = Deno.readTextFileSync(new URL("./codex-0.169.0.jsonl", import.meta.url));
  return text.trim().split("\n").map((line) => {
    const record = JSON.parse(line);
    return {
      body: record.body,
      reply: record.reply,
      events: record.response.events.map(parseEvent),
    };
  });
}

/** The canonical answer behind a recorded reply, with the usage the recording reported. */
export function answerFromRecord(record: CodexRecord, id = "turn1"): TurnAnswer {
  const output = record.reply.output;
  const texts = (type: string) =>
    output.filter((item) => item.type === type).flatMap((item) =>
      type === "reasoning"
        ? item.summary.map((s: Json) => s.text)
        : item.content.map((c: Json) => c.text)
    ).join("\n");
  const calls = output.filter((item) => item.type === "function_call").map((item) => ({
    id: item.call_id,
    name: item.name,
    arguments: item.arguments,
  }));
  const final = record.events.at(-1)!.data.response;
  return {
    id,
    model: record.body.model,
    message: {
      role: "assistant",
      content: texts("message"),
      reasoning_content: texts("reasoning"),
      ...(calls.length > 0 && { tool_calls: calls }),
    },
    stopReason: calls.length > 0 ? "tool_calls" : "stop",
    usage: {
      input_tokens: final.usage.input_tokens,
      output_tokens: final.usage.output_tokens,
      reasoning_tokens: final.usage.output_tokens_details.reasoning_tokens,
      cached_tokens: final.usage.input_tokens_details.cached_tokens,
    },
    created: final.created_at,
  };
}
