import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { type AnswerHeader, answerHeader, type TurnAnswer } from "../../../canonical/mod.ts";
import type { SseEvent } from "../../protocol.ts";
import { answerFromRecord, loadCapture } from "./__fixtures__/load.ts";
import { toMessageResponse } from "./response.ts";
import { streamEncoder, toStreamEvents } from "./stream.ts";

// deno-lint-ignore no-explicit-any
type Data = any;

/** What the official SDK accumulates from our events (served by a fake `fetch`). */
async function accumulate(events: SseEvent[]): Promise<unknown> {
  const sse = events.map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join("");
  const client = new Anthropic({
    apiKey: "test",
    baseURL: "http://gateway.invalid",
    maxRetries: 0,
    fetch: () =>
      Promise.resolve(new Response(sse, { headers: { "content-type": "text/event-stream" } })),
  });
  const streamed = await client.messages.stream({
    model: "policy",
    max_tokens: 100,
    messages: [],
  }).finalMessage();
  // The SDK adds `parsed_output: null` and `stop_details: undefined` to what it accumulates.
  const { parsed_output: _, ...message } = streamed as typeof streamed & {
    parsed_output?: unknown;
  };
  return JSON.parse(JSON.stringify(message));
}

/** `text` cut into pieces of 1 to 7 code points (sizes cycle, so runs are reproducible). */
function pieces(text: string): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0, n = 0; i < chars.length; n++) {
    const size = 1 + (n * 5) % 7;
    out.push(chars.slice(i, i + size).join(""));
    i += size;
  }
  return out;
}

/** Streams the answer piece by piece: start, reasoning pieces, text pieces, finish. */
function streamInPieces(answer: TurnAnswer): SseEvent[] {
  const encoder = streamEncoder(answerHeader(answer));
  return [
    ...encoder.start(),
    ...pieces(answer.message.reasoning_content ?? "").flatMap((p) => encoder.reasoning(p)),
    ...pieces(answer.message.content).flatMap((p) => encoder.text(p)),
    ...encoder.finish(answer),
  ];
}

const parse = (events: SseEvent[]): Data[] => events.map((e) => JSON.parse(e.data));

/**
 * The invariants of any sequence: `event:` equals the data type, message_start and ping first,
 * blocks numbered 0, 1, 2… each started, then its deltas, then stopped before the next starts,
 * message_delta then message_stop last. Returns the block types in order.
 */
function checkStructure(events: SseEvent[]): string[] {
  const data = parse(events);
  events.forEach((e, i) => assert.equal(e.event, data[i].type));
  assert.deepEqual(data.slice(0, 2).map((d) => d.type), ["message_start", "ping"]);
  assert.deepEqual(data.slice(-2).map((d) => d.type), ["message_delta", "message_stop"]);
  const types: string[] = [];
  let open: number | undefined;
  for (const d of data.slice(2, -2)) {
    switch (d.type) {
      case "content_block_start":
        assert.equal(open, undefined, "a block starts while another is open");
        assert.equal(d.index, types.length, "block indices are consecutive");
        open = d.index;
        types.push(d.content_block.type);
        break;
      case "content_block_delta":
        assert.equal(d.index, open);
        break;
      case "content_block_stop":
        assert.equal(d.index, open);
        open = undefined;
        break;
      default:
        assert.fail(`unexpected ${d.type} inside the message`);
    }
  }
  assert.equal(open, undefined, "every block is stopped");
  return types;
}

function answer(message: Partial<TurnAnswer["message"]>): TurnAnswer {
  return {
    id: "t9",
    model: "policy",
    message: { role: "assistant", content: "", ...message },
    stopReason: message.tool_calls ? "tool_calls" : "stop",
    usage: { input_tokens: 12, output_tokens: 34, reasoning_tokens: 5, cached_tokens: 3 },
    created: 1_700_000_000,
  };
}

const header: AnswerHeader = {
  id: "t9",
  model: "policy",
  created: 1_700_000_000,
  inputTokens: 12,
  cachedTokens: 3,
};

const full = answer({
  reasoning_content: "Let me look at the files first. ".repeat(5) + "😀 done",
  content: "I will list them now.\n" + "ok ".repeat(40),
  tool_calls: [
    { id: "toolu_1", name: "Bash", arguments: '{"command":"ls -la"}' },
    { id: "toolu_2", name: "Read", arguments: '{ "file_path" : "/tmp/x" }' },
  ],
});

for (
  const [name, make] of [
    ["fixture reply 1", () => answerFromRecord(loadCapture()[0])],
    ["fixture reply 2", () => answerFromRecord(loadCapture()[1])],
    ["reasoning, text and two tool calls", () => full],
  ] as const
) {
  Deno.test(`${name}: streamed in small pieces, the SDK accumulates the non-streaming body`, async () => {
    const a = make();
    const events = streamInPieces(a);
    checkStructure(events);
    assert.deepEqual(await accumulate(events), toMessageResponse(a));
  });
}

Deno.test("the opening events come from the header alone", () => {
  const [start, ping] = parse(streamEncoder(header).start());
  assert.deepEqual(start, {
    type: "message_start",
    message: {
      id: "msg_t9",
      type: "message",
      role: "assistant",
      model: "policy",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  assert.deepEqual(ping, { type: "ping" });
});

Deno.test("only text: one text block, no thinking block", async () => {
  const a = answer({ content: "hello there, " + "word ".repeat(30) });
  const events = streamInPieces(a);
  assert.deepEqual(checkStructure(events), ["text"]);
  assert.ok(!parse(events).some((d) => d.delta?.type === "signature_delta"));
  assert.deepEqual(await accumulate(events), toMessageResponse(a));
});

Deno.test("only tool calls: start then finish gives the tool_use blocks from index 0", async () => {
  const a = answer({
    tool_calls: [
      { id: "toolu_a", name: "A", arguments: "{}" },
      { id: "toolu_b", name: "B", arguments: '{"x": 1}' },
    ],
  });
  const encoder = streamEncoder(answerHeader(a));
  const events = [...encoder.start(), ...encoder.finish(a)];
  assert.deepEqual(checkStructure(events), ["tool_use", "tool_use"]);
  assert.deepEqual(await accumulate(events), toMessageResponse(a));
  assert.deepEqual(parse(events).at(-2), {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 34 },
  });
});

Deno.test("reasoning streamed partially: finish sends the rest, closes it, then the text", async () => {
  const a = full;
  const reasoning = a.message.reasoning_content!;
  const encoder = streamEncoder(answerHeader(a));
  const events = [...encoder.start(), ...encoder.reasoning(reasoning.slice(0, 40))];
  assert.deepEqual(parse(events).slice(2).map((d) => d.type), [
    "content_block_start",
    "content_block_delta",
  ]);
  const finish = encoder.finish(a);
  events.push(...finish);
  // Nothing re-opens the thinking block: finish goes on with its deltas at index 0.
  const first = JSON.parse(finish[0].data);
  assert.deepEqual([first.index, first.delta.type], [0, "thinking_delta"]);
  assert.deepEqual(checkStructure(events), ["thinking", "text", "tool_use", "tool_use"]);
  const signatures = parse(events).filter((d) => d.delta?.type === "signature_delta");
  assert.deepEqual(signatures.map((d) => d.delta.signature), ["rollgate:t9"]);
  assert.deepEqual(await accumulate(events), toMessageResponse(a));
});

Deno.test("text closes the thinking block with the signature before opening its own", () => {
  const encoder = streamEncoder(header);
  encoder.start();
  encoder.reasoning("hmm");
  assert.deepEqual(parse(encoder.text("Hi")), [
    {
      type: "content_block_delta",
      index: 0,
      delta: { type: "signature_delta", signature: "rollgate:t9" },
    },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Hi" } },
  ]);
  assert.deepEqual(parse(encoder.text(" there")), [
    { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: " there" } },
  ]);
});

Deno.test("empty deltas emit nothing and open no block", () => {
  const a = answer({ content: "x" });
  const encoder = streamEncoder(answerHeader(a));
  const events = [...encoder.start()];
  assert.deepEqual(encoder.reasoning(""), []);
  assert.deepEqual(encoder.text(""), []);
  events.push(...encoder.finish(a));
  assert.deepEqual(checkStructure(events), ["text"]);
});

Deno.test("a long delta is split into pieces of at most 64 code points", () => {
  const encoder = streamEncoder(header);
  encoder.start();
  const delta = "think ".repeat(50);
  const parsed = parse(encoder.reasoning(delta));
  const deltas = parsed.filter((d) => d.type === "content_block_delta");
  assert.ok(deltas.length >= 5);
  for (const d of deltas) assert.ok(Array.from(d.delta.thinking).length <= 64);
  assert.equal(deltas.map((d) => d.delta.thinking).join(""), delta);
});

Deno.test("a streamed part that is not a prefix of the final one gets nothing more", () => {
  const a = answer({ reasoning_content: "final reasoning", content: "final text" });
  const encoder = streamEncoder(answerHeader(a));
  const events = [
    ...encoder.start(),
    ...encoder.reasoning("other"),
    ...encoder.text("different"),
  ];
  const finish = encoder.finish(a);
  events.push(...finish);
  assert.deepEqual(checkStructure(events), ["thinking", "text"]);
  // finish only closes the text block and ends the message.
  assert.deepEqual(parse(finish).map((d) => d.type), [
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
});

Deno.test("reasoning after the text has started is dropped; calls after finish emit nothing", () => {
  const a = answer({ reasoning_content: "late", content: "text" });
  const encoder = streamEncoder(answerHeader(a));
  const events = [...encoder.start(), ...encoder.text("te")];
  assert.deepEqual(encoder.reasoning("late"), []);
  events.push(...encoder.finish(a));
  assert.deepEqual(checkStructure(events), ["text"]);
  assert.deepEqual(encoder.text("more"), []);
  assert.deepEqual(encoder.reasoning("more"), []);
  assert.deepEqual(encoder.finish(a), []);
});

Deno.test("toStreamEvents equals the encoder fed whole strings, and the SDK agrees", async () => {
  const encoder = streamEncoder(answerHeader(full));
  const events = [
    ...encoder.start(),
    ...encoder.reasoning(full.message.reasoning_content!),
    ...encoder.text(full.message.content),
    ...encoder.finish(full),
  ];
  assert.deepEqual(toStreamEvents(full), events);
  assert.deepEqual(await accumulate(events), toMessageResponse(full));
});
