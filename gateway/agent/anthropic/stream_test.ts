import assert from "node:assert/strict";
import type { TurnAnswer } from "../../../canonical/mod.ts";
import type { SseEvent } from "../../protocol.ts";
import { answerFromRecord, loadCapture, parseWireEvent } from "./__fixtures__/load.ts";
import { streamErrorEvents, toStreamEvents } from "./stream.ts";

// deno-lint-ignore no-explicit-any
type Data = any;

const wire = (e: SseEvent) => `event: ${e.event}\ndata: ${e.data}`;

/**
 * Event type + block index + block/delta type, with repeated deltas of one kind collapsed:
 * how many pieces a text is cut into is free, the order of everything else is not.
 */
function shape(events: { event: string; data: Data }[]): string[] {
  const out: string[] = [];
  for (const { event, data } of events) {
    const kind = data.content_block?.type ?? data.delta?.type ?? "";
    const key = [event, data.index ?? "", kind].join(" ");
    if (out.at(-1) !== key || event !== "content_block_delta") out.push(key);
  }
  return out;
}

/** Concatenated deltas per block index and delta type. */
function joined(events: { data: Data }[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { data } of events) {
    if (data.type !== "content_block_delta") continue;
    const { type, ...rest } = data.delta;
    const key = `${data.index} ${type}`;
    out[key] = (out[key] ?? "") + Object.values(rest).join("");
  }
  return out;
}

for (const seq of [1, 2]) {
  Deno.test(`fixture reply ${seq}: same events as the recording Claude Code accepted`, () => {
    const record = loadCapture()[seq - 1];
    const recorded = record.response.events.map(parseWireEvent);
    const ours = toStreamEvents(answerFromRecord(record));
    const parsed = ours.map((e) => ({ event: e.event!, data: JSON.parse(e.data) }));

    for (const e of parsed) assert.equal(e.event, e.data.type);
    assert.deepEqual(shape(parsed), shape(recorded));

    // Every non-delta event is byte-identical to the recorded one (ids, usage, empty starts).
    const nonDelta = (events: string[]) => events.filter((e) => !e.includes("content_block_delta"));
    assert.deepEqual(nonDelta(ours.map(wire)), nonDelta(record.response.events));

    // The deltas reproduce the reply; only the signature is ours.
    const expected = joined(recorded);
    const signatureKey = "0 signature_delta";
    assert.ok(expected[signatureKey].startsWith("fakesig_"));
    expected[signatureKey] = `rollgate:${answerFromRecord(record).id}`;
    assert.deepEqual(joined(parsed), expected);
  });
}

Deno.test("fixture reply 1: tool input deltas start empty and concatenate to the arguments", () => {
  const record = loadCapture()[0];
  const parsed = toStreamEvents(answerFromRecord(record)).map((e) => JSON.parse(e.data));
  const inputDeltas = parsed.filter((d) => d.delta?.type === "input_json_delta");
  assert.equal(inputDeltas[0].delta.partial_json, "");
  const input = inputDeltas.map((d) => d.delta.partial_json).join("");
  const toolUse = record.reply.blocks.find((b) => b.type === "tool_use");
  assert.deepEqual(JSON.parse(input), toolUse?.input);
  // Like the recording: the empty opener, then the 96-character arguments in two pieces.
  assert.equal(inputDeltas.length, 3);
});

function answer(message: Partial<TurnAnswer["message"]>): TurnAnswer {
  return {
    id: "t9",
    model: "policy",
    message: { role: "assistant", content: "", ...message },
    stopReason: message.tool_calls ? "tool_calls" : "stop",
    usage: { input_tokens: 12, output_tokens: 34, reasoning_tokens: 0, cached_tokens: 0 },
    created: 0,
  };
}

Deno.test("arguments are streamed as written, not re-serialised", () => {
  const args = '{ "command" :  "ls -la",\n  "timeout": 1e3 }';
  const events = toStreamEvents(
    answer({ tool_calls: [{ id: "toolu_x", name: "Bash", arguments: args }] }),
  );
  const parsed = events.map((e) => JSON.parse(e.data));
  const partial = parsed.filter((d) => d.delta?.type === "input_json_delta");
  assert.equal(partial.map((d) => d.delta.partial_json).join(""), args);
  assert.deepEqual(parsed[2].content_block, {
    type: "tool_use",
    id: "toolu_x",
    name: "Bash",
    input: {},
  });
  assert.deepEqual(parsed.at(-2), {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 34 },
  });
});

Deno.test("long text is sent in several deltas of at most 64 code points", () => {
  const text = "word ".repeat(100) + "😀".repeat(100);
  const parsed = toStreamEvents(answer({ content: text })).map((e) => JSON.parse(e.data));
  const deltas = parsed.filter((d) => d.delta?.type === "text_delta").map((d) => d.delta.text);
  assert.ok(deltas.length >= 8);
  assert.equal(deltas.join(""), text);
  for (const d of deltas) assert.ok(Array.from(d).length <= 64);
  assert.deepEqual(parsed.map((d) => d.type).filter((t) => t !== "content_block_delta"), [
    "message_start",
    "ping",
    "content_block_start",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
});

Deno.test("a turn with several tool calls numbers its blocks in order", () => {
  const parsed = toStreamEvents(answer({
    content: "hi",
    tool_calls: [
      { id: "toolu_1", name: "A", arguments: "{}" },
      { id: "toolu_2", name: "B", arguments: '{"x":1}' },
    ],
  })).map((e) => JSON.parse(e.data));
  const starts = parsed.filter((d) => d.type === "content_block_start");
  assert.deepEqual(starts.map((d) => [d.index, d.content_block.type, d.content_block.id]), [
    [0, "text", undefined],
    [1, "tool_use", "toolu_1"],
    [2, "tool_use", "toolu_2"],
  ]);
  assert.deepEqual(joined(parsed.map((data) => ({ data }))), {
    "0 text_delta": "hi",
    "1 input_json_delta": "{}",
    "2 input_json_delta": '{"x":1}',
  });
});

Deno.test("streamErrorEvents: one error event in Anthropic's shape", () => {
  const events = streamErrorEvents(529, "busy");
  assert.equal(events.length, 1);
  assert.equal(events[0].event, "error");
  assert.deepEqual(JSON.parse(events[0].data), {
    type: "error",
    error: { type: "overloaded_error", message: "busy" },
  });
});
