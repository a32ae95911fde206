import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { CanonicalRequest, TurnAnswer } from "../../../canonical/mod.ts";
import type { SseEvent } from "../../protocol.ts";
import assert from "node:assert/strict";
import { loadPiRecords, recordedAnswer, recordedChunk } from "./pi_fixture.ts";
import { streamErrorEvents, toStreamEvents } from "./stream.ts";
import { toCanonicalRequest } from "./to_canonical.ts";

const records = loadPiRecords();

/** pi and the OpenAI SDK also read `reasoning_content`, which the SDK's types do not declare. */
type Delta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };

function parseChunk(event: SseEvent): ChatCompletionChunk | null {
  return event.data === "[DONE]" ? null : JSON.parse(event.data);
}

/** What kind of delta a chunk carries; consecutive repeats collapse so chunk sizes do not matter. */
function deltaKinds(chunks: (Record<string, unknown> | null)[]): string[] {
  const kinds = chunks.map((chunk) => {
    if (chunk === null) return "[DONE]";
    const choices = chunk.choices as ChatCompletionChunk.Choice[];
    if (choices.length === 0) return "usage";
    const { delta, finish_reason } = choices[0];
    if (finish_reason) return `finish:${finish_reason}`;
    if (delta.role) return "role";
    if (delta.tool_calls) return delta.tool_calls[0].id ? "tool_call_start" : "tool_call_args";
    return Object.keys(delta).join(",");
  });
  return kinds.filter((kind, i) => kind !== kinds[i - 1]);
}

/** Rebuilds the message from typed chunks the way a client (pi) does. */
function accumulate(chunks: ChatCompletionChunk[]) {
  let role = "", content = "", reasoning = "", finish: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      const delta: Delta = choice.delta;
      role ||= delta.role ?? "";
      content += delta.content ?? "";
      reasoning += delta.reasoning_content ?? "";
      for (const part of delta.tool_calls ?? []) {
        calls[part.index] ??= { id: "", name: "", arguments: "" };
        calls[part.index].id ||= part.id ?? "";
        calls[part.index].name ||= part.function?.name ?? "";
        calls[part.index].arguments += part.function?.arguments ?? "";
      }
      finish = choice.finish_reason ?? finish;
    }
  }
  return { role, content, reasoning, calls, finish };
}

/** An OpenAI SDK client whose every request is answered with the given SSE events. */
function clientStreaming(events: SseEvent[]): OpenAI {
  const wire = events.map((event) => `data: ${event.data}\n\n`).join("");
  return new OpenAI({
    apiKey: "test",
    baseURL: "http://gateway.invalid/v1",
    maxRetries: 0,
    fetch: () =>
      Promise.resolve(new Response(wire, { headers: { "content-type": "text/event-stream" } })),
  });
}

for (const [n, record] of records.entries()) {
  Deno.test(`pi record ${n + 1}: the recorded reply streams in the recorded chunk structure`, () => {
    const answer = recordedAnswer(record);
    const events = toStreamEvents(answer, toCanonicalRequest(record.body));
    const recorded = record.response.events;

    assert.deepEqual(
      deltaKinds(events.map((e) => parseChunk(e) as Record<string, unknown> | null)),
      deltaKinds(recorded.map(recordedChunk)),
    );
    assert.ok(events.every((event) => event.event === undefined));
    // Same ids and timestamps as the recording, so the envelope chunks are byte-identical.
    assert.equal(`data: ${events[0].data}`, recorded[0]);
    assert.equal(`data: ${events.at(-3)?.data}`, recorded.at(-3));
    assert.equal(events.at(-1)?.data, "[DONE]");

    const chunks = events.map(parseChunk).filter((c) => c !== null);
    for (const chunk of chunks) {
      assert.equal(chunk.id, `chatcmpl-${answer.id}`);
      assert.equal(chunk.object, "chat.completion.chunk");
      assert.equal(chunk.created, answer.created);
      assert.equal(chunk.model, "policy-model-v1");
    }
    const withChoices = chunks.filter((chunk) => chunk.choices.length > 0);
    assert.ok(withChoices.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null));

    const usage = chunks.at(-1)?.usage;
    const recordedUsage = recordedChunk(recorded.at(-2)!)?.usage;
    assert.deepEqual(chunks.at(-1)?.choices, []);
    assert.deepEqual(usage, {
      ...(recordedUsage as object),
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });

    const rebuilt = accumulate(chunks);
    assert.deepEqual(rebuilt, {
      role: "assistant",
      content: record.reply.content,
      reasoning: record.reply.reasoning_content,
      calls: (record.reply.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
      })),
      finish: record.reply.plan === "tool" ? "tool_calls" : "stop",
    });
  });
}

/** A long turn with two calls, one of them custom, and text that needs several pieces. */
const longAnswer: TurnAnswer = {
  id: "t1",
  model: "m",
  created: 1,
  message: {
    role: "assistant",
    content: "😀 emoji and text ".repeat(20),
    reasoning_content: "because ".repeat(30),
    tool_calls: [
      {
        id: "call_a",
        name: "write",
        arguments: JSON.stringify({ path: "x", content: "y".repeat(150) }),
      },
      {
        id: "call_b",
        name: "apply_patch",
        arguments: '{"input":"*** Begin Patch\\n"}',
        kind: "custom",
      },
    ],
  },
  stopReason: "tool_calls",
  usage: { input_tokens: 50, output_tokens: 70, reasoning_tokens: 9, cached_tokens: 30 },
};

const chatRequest = (includeUsage: boolean): CanonicalRequest => ({
  protocol: "chat",
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  sampling: {},
  stream: true,
  includeUsage,
});

Deno.test("long deltas are chunked by code point, tool calls get their own index", () => {
  const events = toStreamEvents(longAnswer, chatRequest(false));
  const chunks = events.map(parseChunk).filter((c) => c !== null);
  const deltas = chunks.map((chunk) => chunk.choices[0].delta as Delta);
  for (const delta of deltas) {
    const text = delta.content ?? delta.reasoning_content ??
      delta.tool_calls?.[0].function?.arguments;
    if (text) {
      assert.ok(Array.from(text).length <= 64, `piece too long: ${text}`);
      assert.ok(text.isWellFormed(), "a piece splits a surrogate pair");
    }
  }
  assert.ok(deltas.filter((d) => d.content).length > 1);
  assert.ok(deltas.filter((d) => d.reasoning_content).length > 1);
  assert.equal(chunks.at(-1)?.choices[0].finish_reason, "tool_calls");
  assert.equal(chunks.filter((c) => c.choices.length === 0).length, 0, "no usage chunk asked");

  const starts = deltas.flatMap((d) => d.tool_calls ?? []).filter((part) => part.id);
  assert.deepEqual(starts, [
    { index: 0, id: "call_a", type: "function", function: { name: "write", arguments: "" } },
    { index: 1, id: "call_b", type: "custom", custom: { name: "apply_patch", input: "" } },
  ]);
  const rebuilt = accumulate(chunks);
  assert.equal(rebuilt.content, longAnswer.message.content);
  assert.equal(rebuilt.reasoning, longAnswer.message.reasoning_content);
  assert.equal(rebuilt.calls[0].arguments, longAnswer.message.tool_calls?.[0].arguments);
});

Deno.test("the OpenAI SDK accumulates the stream into the full message", async () => {
  const events = toStreamEvents(longAnswer, chatRequest(true));
  const stream = clientStreaming(events).chat.completions.stream({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    stream_options: { include_usage: true },
  });
  const completion = await stream.finalChatCompletion();
  const [choice] = completion.choices;
  assert.equal(completion.id, "chatcmpl-t1");
  assert.equal(choice.finish_reason, "tool_calls");
  assert.equal(choice.message.role, "assistant");
  assert.equal(choice.message.content, longAnswer.message.content);
  assert.deepEqual(choice.message.tool_calls, [
    {
      id: "call_a",
      type: "function",
      function: { name: "write", arguments: longAnswer.message.tool_calls?.[0].arguments },
    },
    { id: "call_b", type: "custom", custom: { name: "apply_patch", input: "*** Begin Patch\n" } },
  ]);
  assert.deepEqual(completion.usage, {
    prompt_tokens: 50,
    completion_tokens: 70,
    total_tokens: 120,
    prompt_tokens_details: { cached_tokens: 30 },
    completion_tokens_details: { reasoning_tokens: 9 },
  });
});

Deno.test("an empty answer still streams role, finish and [DONE]", () => {
  const empty: TurnAnswer = { ...longAnswer, message: { role: "assistant", content: "" } };
  const events = toStreamEvents({ ...empty, stopReason: "length" }, chatRequest(false));
  assert.deepEqual(deltaKinds(events.map((e) => parseChunk(e) as Record<string, unknown> | null)), [
    "role",
    "finish:length",
    "[DONE]",
  ]);
});

Deno.test("streamErrorEvents: an OpenAI error chunk then [DONE]; the SDK throws it", async () => {
  const events = streamErrorEvents(500, "policy server unavailable");
  assert.deepEqual(events, [
    {
      data: JSON.stringify({
        error: {
          message: "policy server unavailable",
          type: "server_error",
          param: null,
          code: null,
        },
      }),
    },
    { data: "[DONE]" },
  ]);
  const stream = clientStreaming(events).chat.completions.stream({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
  });
  await assert.rejects(stream.finalChatCompletion(), (err: unknown) => {
    assert.ok(err instanceof OpenAI.APIError, `expected APIError, got ${err}`);
    assert.match(err.message, /policy server unavailable/);
    return true;
  });
});
