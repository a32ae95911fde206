import assert from "node:assert/strict";
import type { TurnAnswer } from "../../../canonical/mod.ts";
import type { SseEvent } from "../../protocol.ts";
import { answerFromRecord, loadCodexRecords } from "./__fixtures__/codex.ts";
import { toResponseObject } from "./response.ts";
import { streamErrorEvents, toStreamEvents } from "./stream.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const records = loadCodexRecords();

function parse(events: SseEvent[]): { event?: string; data: Json }[] {
  return events.map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
}

/** Event types with runs of the same delta type collapsed: how many pieces depends on chunking. */
function shape(types: string[]): string[] {
  return types.filter((t, i) => !(t.endsWith(".delta") && types[i - 1] === t));
}

/** Items with the ids and opaque handles blanked: those are per-server, the rest must match. */
function blankIds(items: Json[]): Json[] {
  return items.map((item) => ({
    ...item,
    id: "<id>",
    ...("encrypted_content" in item && { encrypted_content: "<enc>" }),
  }));
}

/** Concatenated deltas of one event type for one item. */
function deltas(events: { data: Json }[], type: string, itemId: string): string {
  return events.filter((e) => e.data.type === type && e.data.item_id === itemId)
    .map((e) => e.data.delta).join("");
}

for (const [n, record] of records.entries()) {
  Deno.test(`fixture reply ${n + 1}: same event sequence and items as the recorded stream`, () => {
    const answer = answerFromRecord(record);
    const ours = parse(toStreamEvents(answer));
    const recorded = record.events;

    assert.deepEqual(
      shape(ours.map((e) => e.data.type)),
      shape(recorded.map((e) => e.data.type)),
    );
    ours.forEach((e, i) => {
      assert.equal(e.data.sequence_number, i);
      assert.equal(e.event, e.data.type);
    });

    // Every non-delta event carries the same fields as the recorded one.
    const fields = (events: { data: Json }[]) =>
      events.filter((e) => !e.data.type.endsWith(".delta")).map((e) => Object.keys(e.data));
    assert.deepEqual(fields(ours), fields(recorded));

    // The added/done items match the recorded ones up to ids.
    const items = (events: { data: Json }[], type: string) =>
      blankIds(events.filter((e) => e.data.type === type).map((e) => e.data.item));
    assert.deepEqual(
      items(ours, "response.output_item.added"),
      items(recorded, "response.output_item.added"),
    );
    assert.deepEqual(
      items(ours, "response.output_item.done"),
      items(recorded, "response.output_item.done"),
    );

    const final = ours.at(-1)!.data;
    const recordedFinal = recorded.at(-1)!.data;
    assert.equal(final.type, "response.completed");
    assert.equal(final.response.status, "completed");
    assert.deepEqual(blankIds(final.response.output), blankIds(record.reply.output));
    assert.deepEqual(final.response.usage, recordedFinal.response.usage);
    assert.deepEqual(final.response, toResponseObject(answer));

    for (const [i, item] of final.response.output.entries()) {
      const done = ours.find((e) =>
        e.data.type === "response.output_item.done" && e.data.output_index === i
      );
      assert.deepEqual(done?.data.item, item);
    }
  });
}

Deno.test("created and in_progress announce the response without output or usage", () => {
  const answer = answerFromRecord(records[0], "abc");
  const [created, inProgress] = parse(toStreamEvents(answer));
  for (const event of [created, inProgress]) {
    assert.equal(event.data.response.id, "resp_abc");
    assert.equal(event.data.response.status, "in_progress");
    assert.deepEqual(event.data.response.output, []);
    assert.equal(event.data.response.usage, null);
  }
  assert.deepEqual([created.event, inProgress.event], ["response.created", "response.in_progress"]);
});

const longAnswer: TurnAnswer = {
  id: "t7",
  model: "m",
  message: {
    role: "assistant",
    content: "word ".repeat(40) + "🙂".repeat(70),
    reasoning_content: "think ".repeat(30),
    tool_calls: [
      { id: "call_1", name: "exec_command", arguments: JSON.stringify({ cmd: "x".repeat(150) }) },
      {
        id: "call_2",
        name: "apply_patch",
        arguments: JSON.stringify({ input: "line\n".repeat(30) }),
        kind: "custom",
      },
    ],
  },
  stopReason: "tool_calls",
  usage: { input_tokens: 1, output_tokens: 2, reasoning_tokens: 0, cached_tokens: 0 },
  created: 1,
};

Deno.test("long texts are streamed in pieces that concatenate to the full text", () => {
  const events = parse(toStreamEvents(longAnswer));
  const { message } = longAnswer;
  const call = message.tool_calls![0];
  assert.equal(
    deltas(events, "response.reasoning_summary_text.delta", "rs_t7"),
    message.reasoning_content,
  );
  assert.equal(deltas(events, "response.output_text.delta", "msg_t7"), message.content);
  assert.equal(deltas(events, "response.function_call_arguments.delta", "fc_1"), call.arguments);
  assert.equal(
    deltas(events, "response.custom_tool_call_input.delta", "ctc_2"),
    "line\n".repeat(30),
  );

  const textDeltas = events.filter((e) => e.data.type === "response.output_text.delta");
  assert.ok(textDeltas.length >= 5, `only ${textDeltas.length} pieces`);
  for (const e of events.filter((e) => e.data.type.endsWith(".delta"))) {
    assert.ok(Array.from(e.data.delta as string).length <= 64);
    assert.ok(!/[\uD800-\uDBFF]$/.test(e.data.delta), "piece ends inside a surrogate pair");
  }
});

Deno.test("custom tool calls stream as custom_tool_call_input events", () => {
  const events = parse(toStreamEvents(longAnswer));
  const ctc = events.filter((e) => e.data.item_id === "ctc_2" || e.data.item?.id === "ctc_2");
  assert.deepEqual(shape(ctc.map((e) => e.data.type)), [
    "response.output_item.added",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
    "response.output_item.done",
  ]);
  assert.equal(ctc[0].data.item.input, "");
  assert.equal(ctc[0].data.item.status, "in_progress");
  assert.equal(ctc.at(-2)!.data.input, "line\n".repeat(30));
  assert.equal(ctc.at(-1)!.data.item.status, "completed");
});

Deno.test("a length stop ends with response.incomplete", () => {
  const events = parse(toStreamEvents({ ...longAnswer, stopReason: "length" }));
  const last = events.at(-1)!;
  assert.equal(last.event, "response.incomplete");
  assert.equal(last.data.response.status, "incomplete");
  assert.deepEqual(last.data.response.incomplete_details, { reason: "max_output_tokens" });
  assert.ok(!events.some((e) => e.data.type === "response.completed"));
});

Deno.test("stream errors: one response.failed with the error", () => {
  for (const [status, code] of [[500, "server_error"], [400, "invalid_request"]] as const) {
    const events = streamErrorEvents(status, "backend down");
    assert.equal(events.length, 1);
    assert.equal(events[0].event, "response.failed");
    const data = JSON.parse(events[0].data);
    assert.equal(data.type, "response.failed");
    assert.equal(data.response.status, "failed");
    assert.deepEqual(data.response.error, { code, message: "backend down" });
  }
});
