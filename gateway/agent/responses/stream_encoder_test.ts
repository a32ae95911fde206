import assert from "node:assert/strict";
import OpenAI from "openai";
import { answerHeader, type TurnAnswer } from "../../../canonical/mod.ts";
import type { AnswerStreamEncoder, SseEvent } from "../../protocol.ts";
import { answerFromRecord, loadCodexRecords } from "./__fixtures__/codex.ts";
import { responsesAdapter } from "./mod.ts";
import { toResponseObject } from "./response.ts";
import { streamEncoder, toStreamEvents } from "./stream.ts";

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

function types(events: { data: Json }[]): string[] {
  return events.map((e) => e.data.type);
}

/** Concatenated deltas of one event type. */
function deltas(events: { data: Json }[], type: string): string {
  return events.filter((e) => e.data.type === type).map((e) => e.data.delta).join("");
}

/** Splits text into pieces of 1 to 5 code points, the same way on every run. */
function pieces(text: string): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0, n = 0; i < chars.length; n++) {
    const size = 1 + ((n * 7 + 3) % 5);
    out.push(chars.slice(i, i + size).join(""));
    i += size;
  }
  return out;
}

/** The answer streamed in small pieces: start, reasoning deltas, text deltas, finish. */
function streamInPieces(
  answer: TurnAnswer,
  encoder: AnswerStreamEncoder = streamEncoder(answerHeader(answer)),
): SseEvent[] {
  const events = [...encoder.start()];
  for (const piece of pieces(answer.message.reasoning_content ?? "")) {
    events.push(...encoder.reasoning(piece));
  }
  for (const piece of pieces(answer.message.content)) events.push(...encoder.text(piece));
  events.push(...encoder.finish(answer));
  return events;
}

/** The output items without the fields the SDK's parsing adds (`parsed`, `parsed_arguments`). */
function unparsed(output: Json[]): Json[] {
  return output.map(({ parsed_arguments: _, ...item }) =>
    item.type === "message"
      ? { ...item, content: item.content.map(({ parsed: _, ...part }: Json) => part) }
      : item
  );
}

/** What the official SDK makes of our SSE: `responses.stream(...).finalResponse()`. */
async function sdkFinalResponse(events: SseEvent[]): Promise<Json> {
  const wire = events.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join("");
  const client = new OpenAI({
    apiKey: "test",
    baseURL: "http://gateway.invalid/v1",
    maxRetries: 0,
    fetch: () =>
      Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } })),
  });
  return await client.responses.stream({ model: "m", input: "hi" }).finalResponse();
}

/** Checks every property of a well-formed stream and returns the parsed events. */
async function assertWellFormed(answer: TurnAnswer, events: SseEvent[]) {
  const parsed = parse(events);
  parsed.forEach((e, i) => {
    assert.equal(e.data.sequence_number, i);
    assert.equal(e.event, e.data.type);
  });
  const final = toResponseObject(answer);
  const last = parsed.at(-1)!;
  assert.equal(
    last.event,
    final.status === "incomplete" ? "response.incomplete" : "response.completed",
  );
  assert.deepEqual(last.data.response, final);
  assert.equal(
    deltas(parsed, "response.reasoning_summary_text.delta"),
    answer.message.reasoning_content ?? "",
  );
  assert.equal(deltas(parsed, "response.output_text.delta"), answer.message.content);
  const done = parsed.filter((e) => e.data.type === "response.output_item.done");
  assert.deepEqual(done.map((e) => e.data.item), final.output);
  assert.deepEqual(done.map((e) => e.data.output_index), final.output.map((_, i) => i));
  if (final.status === "completed") {
    const sdk = await sdkFinalResponse(events);
    assert.equal(sdk.id, final.id);
    assert.equal(sdk.status, "completed");
    assert.deepEqual(unparsed(sdk.output), final.output);
    assert.deepEqual(sdk.usage, final.usage);
  }
  return parsed;
}

for (const [n, record] of records.entries()) {
  Deno.test(`fixture reply ${n + 1}: streamed in pieces, same shape as recorded`, async () => {
    const answer = answerFromRecord(record);
    const events = streamInPieces(answer);
    const parsed = await assertWellFormed(answer, events);
    assert.deepEqual(shape(types(parsed)), shape(record.events.map((e) => e.data.type)));
    assert.ok(parsed.filter((e) => e.data.type.endsWith(".delta")).length > 10);
  });
}

const reasoningAndText: TurnAnswer = {
  id: "t1",
  model: "m",
  message: {
    role: "assistant",
    content: "Hello 🙂 world, ".repeat(10),
    reasoning_content: "Let me think. ".repeat(10),
  },
  stopReason: "stop",
  usage: { input_tokens: 10, output_tokens: 20, reasoning_tokens: 5, cached_tokens: 4 },
  created: 1700000000,
};

Deno.test("start: created and in_progress from the header, sequence from 0", () => {
  const encoder = streamEncoder({
    id: "abc",
    model: "m1",
    created: 42,
    inputTokens: 3,
    cachedTokens: 1,
  });
  const [created, inProgress, ...rest] = parse(encoder.start());
  assert.equal(rest.length, 0);
  assert.deepEqual(types([created, inProgress]), ["response.created", "response.in_progress"]);
  assert.deepEqual([created.data.sequence_number, inProgress.data.sequence_number], [0, 1]);
  for (const event of [created, inProgress]) {
    assert.equal(event.data.response.id, "resp_abc");
    assert.equal(event.data.response.created_at, 42);
    assert.equal(event.data.response.model, "m1");
    assert.equal(event.data.response.status, "in_progress");
    assert.deepEqual(event.data.response.output, []);
    assert.equal(event.data.response.usage, null);
  }
});

Deno.test("reasoning then text: items open on first delta, text closes the reasoning", () => {
  const encoder = streamEncoder(answerHeader(reasoningAndText));
  encoder.start();
  const first = parse(encoder.reasoning("Let me "));
  assert.deepEqual(types(first), [
    "response.output_item.added",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.delta",
  ]);
  assert.deepEqual(first[0].data.item, {
    type: "reasoning",
    id: "rs_t1",
    summary: [],
    encrypted_content: "rollgate:t1",
  });
  assert.deepEqual(types(parse(encoder.reasoning("think. "))), [
    "response.reasoning_summary_text.delta",
  ]);
  const switchOver = parse(encoder.text("Hel"));
  assert.deepEqual(types(switchOver), [
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
  ]);
  assert.equal(switchOver[0].data.text, "Let me think. ");
  assert.deepEqual(switchOver[2].data.item.summary, [
    { type: "summary_text", text: "Let me think. " },
  ]);
  assert.equal(switchOver[3].data.output_index, 1);
  assert.equal(switchOver[3].data.item.status, "in_progress");
  assert.deepEqual(types(parse(encoder.text("lo"))), ["response.output_text.delta"]);
  assert.deepEqual(switchOver.map((e) => e.data.sequence_number), [6, 7, 8, 9, 10, 11]);
});

Deno.test("reasoning and text in many pieces: the complete path's shape, SDK agrees", async () => {
  const events = streamInPieces(reasoningAndText);
  const parsed = await assertWellFormed(reasoningAndText, events);
  assert.deepEqual(shape(types(parsed)), shape(types(parse(toStreamEvents(reasoningAndText)))));
});

Deno.test("text only: one message item", async () => {
  const answer: TurnAnswer = {
    ...reasoningAndText,
    message: { role: "assistant", content: "Just text, no thinking." },
  };
  const parsed = await assertWellFormed(answer, streamInPieces(answer));
  assert.deepEqual(shape(types(parsed)), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.equal(parsed[2].data.output_index, 0);
});

Deno.test("tool calls only: each call item whole at finish", async () => {
  const answer: TurnAnswer = {
    ...reasoningAndText,
    message: {
      role: "assistant",
      content: "",
      reasoning_content: "",
      tool_calls: [
        { id: "call_a", name: "exec_command", arguments: JSON.stringify({ cmd: "x".repeat(100) }) },
        {
          id: "call_b",
          name: "apply_patch",
          arguments: JSON.stringify({ input: "*** Begin Patch\n" }),
          kind: "custom",
        },
      ],
    },
    stopReason: "tool_calls",
  };
  const encoder = streamEncoder(answerHeader(answer));
  const events = [...encoder.start(), ...encoder.reasoning(""), ...encoder.text("")];
  assert.equal(events.length, 2);
  events.push(...encoder.finish(answer));
  const parsed = await assertWellFormed(answer, events);
  assert.deepEqual(shape(types(parsed)), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
    "response.output_item.added",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.deepEqual(
    parsed.filter((e) => e.data.type === "response.output_item.added").map((e) => e.data.item),
    [
      {
        type: "function_call",
        id: "fc_a",
        call_id: "call_a",
        name: "exec_command",
        arguments: "",
        status: "in_progress",
      },
      {
        type: "custom_tool_call",
        id: "ctc_b",
        call_id: "call_b",
        name: "apply_patch",
        input: "",
        status: "in_progress",
      },
    ],
  );
});

Deno.test("finish completes partly streamed reasoning, then sends the whole text", async () => {
  const answer = reasoningAndText;
  const reasoning = answer.message.reasoning_content!;
  const encoder = streamEncoder(answerHeader(answer));
  const head = [...encoder.start(), ...encoder.reasoning(reasoning.slice(0, 20))];
  const tailEvents = encoder.finish(answer);
  assert.deepEqual(encoder.finish(answer), []); // a second finish sends nothing
  const tail = parse(tailEvents);
  const events = [...head, ...tailEvents];
  const parsed = await assertWellFormed(answer, events);
  assert.equal(tail[0].data.type, "response.reasoning_summary_text.delta");
  assert.equal(deltas(tail, "response.reasoning_summary_text.delta"), reasoning.slice(20));
  assert.deepEqual(shape(types(parsed)), shape(types(parse(toStreamEvents(answer)))));
});

Deno.test("finish opens the reasoning item when nothing was streamed", async () => {
  const answer = reasoningAndText;
  const encoder = streamEncoder(answerHeader(answer));
  const events = [...encoder.start(), ...encoder.finish(answer)];
  const parsed = await assertWellFormed(answer, events);
  assert.deepEqual(types(parsed), types(parse(toStreamEvents(answer))));
});

Deno.test("finish sends the rest of partly streamed text and closes the message", async () => {
  const answer = reasoningAndText;
  const encoder = streamEncoder(answerHeader(answer));
  const events = [
    ...encoder.start(),
    ...encoder.reasoning(answer.message.reasoning_content!),
    ...encoder.text(answer.message.content.slice(0, 7)),
  ];
  const tail = encoder.finish(answer);
  assert.equal(parse(tail)[0].data.type, "response.output_text.delta");
  await assertWellFormed(answer, [...events, ...tail]);
});

Deno.test("response.completed is last, once; a length stop ends with response.incomplete", () => {
  for (const stopReason of ["stop", "tool_calls", "length"] as const) {
    const answer = { ...reasoningAndText, stopReason };
    const eventTypes = types(parse(streamInPieces(answer)));
    const terminal = stopReason === "length" ? "response.incomplete" : "response.completed";
    assert.equal(eventTypes.at(-1), terminal);
    assert.equal(eventTypes.filter((t) => t === terminal).length, 1);
    assert.ok(!eventTypes.slice(0, -1).some((t) => /^response\.(completed|incomplete)$/.test(t)));
  }
});

Deno.test("a streamed prefix that the final text does not continue: nothing more, no throw", () => {
  const answer = reasoningAndText;
  const encoder = streamEncoder(answerHeader(answer));
  encoder.start();
  encoder.reasoning("Let me think. ");
  encoder.text("Goodbye");
  const tail = parse(encoder.finish(answer));
  assert.ok(!tail.some((e) => e.data.type.endsWith(".delta")));
  assert.deepEqual(shape(types(tail)), [
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.equal(tail[0].data.text, answer.message.content);
  assert.deepEqual(tail.at(-1)!.data.response, toResponseObject(answer));
});

Deno.test("the adapter exposes the encoder", async () => {
  const [record] = records;
  const request = responsesAdapter.parseRequest(record.body);
  const answer = answerFromRecord(record);
  const encoder = responsesAdapter.streamEncoder(answerHeader(answer), request);
  await assertWellFormed(answer, streamInPieces(answer, encoder));
});
