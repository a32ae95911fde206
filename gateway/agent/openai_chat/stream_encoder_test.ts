import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import {
  type AnswerHeader,
  answerHeader,
  type CanonicalRequest,
  type TurnAnswer,
} from "../../../canonical/mod.ts";
import type { SseEvent } from "../../protocol.ts";
import assert from "node:assert/strict";
import { openaiChatAdapter } from "./mod.ts";
import { toChatCompletion } from "./response.ts";
import { DELTA_SIZE } from "../text_deltas.ts";
import { streamEncoder, toStreamEvents } from "./stream.ts";

/** The OpenAI SDK's delta type lacks `reasoning_content`, which pi and vLLM-style servers use. */
type Delta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };

const request = (includeUsage = false): CanonicalRequest => ({
  protocol: "chat",
  model: "m",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  sampling: {},
  stream: true,
  includeUsage,
});

const full: TurnAnswer = {
  id: "turn7",
  model: "policy-model-v1",
  created: 1_700_000_000,
  message: {
    role: "assistant",
    content: "Let me look 😀 at the file, then patch it. ".repeat(6),
    reasoning_content: "The user wants a fix; 🤔 first read, then write. ".repeat(5),
    tool_calls: [
      { id: "call_r", name: "read", arguments: JSON.stringify({ path: "src/a.ts" }) },
      {
        id: "call_p",
        name: "apply_patch",
        arguments: JSON.stringify({ input: "*** Begin Patch\n" + "+x\n".repeat(40) }),
        kind: "custom",
      },
    ],
  },
  stopReason: "tool_calls",
  usage: { input_tokens: 120, output_tokens: 80, reasoning_tokens: 20, cached_tokens: 64 },
};

const textOnly: TurnAnswer = {
  ...full,
  message: { role: "assistant", content: "Done: the tests pass. ✅" },
  stopReason: "stop",
};

const toolsOnly: TurnAnswer = {
  ...full,
  message: { role: "assistant", content: "", tool_calls: full.message.tool_calls },
};

/** Splits text into pieces of 1–5 code points (deterministic), the way tokens trickle in. */
function trickle(text: string): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0, n = 0; i < points.length; n++) {
    const size = 1 + (n * 7 + 3) % 5;
    pieces.push(points.slice(i, i + size).join(""));
    i += size;
  }
  return pieces;
}

/** Streams `answer` through a fresh encoder: its reasoning and text (or the given prefixes). */
function encode(
  answer: TurnAnswer,
  includeUsage = false,
  streamed = {
    reasoning: answer.message.reasoning_content ?? "",
    text: answer.message.content,
  },
): SseEvent[] {
  const encoder = streamEncoder(answerHeader(answer), request(includeUsage));
  return [
    ...encoder.start(),
    ...trickle(streamed.reasoning).flatMap((piece) => encoder.reasoning(piece)),
    ...trickle(streamed.text).flatMap((piece) => encoder.text(piece)),
    ...encoder.finish(answer),
  ];
}

function chunksOf(events: SseEvent[]): ChatCompletionChunk[] {
  return events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data));
}

function deltas(events: SseEvent[]): Delta[] {
  return chunksOf(events).flatMap((chunk) => chunk.choices.map((choice) => choice.delta));
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

/**
 * What the OpenAI SDK makes of the stream, shaped like `toChatCompletion`'s body. The SDK
 * accumulates `content` and tool calls but overwrites fields it does not know
 * (`reasoning_content`) with the last delta, so reasoning is concatenated here as pi does; the
 * role chunk's `content: ""` leaves a tool-call-only message at `""` where the JSON body has null.
 */
async function sdkCompletion(events: SseEvent[], includeUsage: boolean) {
  const stream = clientStreaming(events).chat.completions.stream({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  });
  const completion = await stream.finalChatCompletion();
  const [choice] = completion.choices;
  const reasoning = deltas(events).map((d) => d.reasoning_content ?? "").join("");
  const calls = choice.message.tool_calls ?? [];
  return {
    id: completion.id,
    object: "chat.completion",
    created: completion.created,
    model: completion.model,
    choices: [{
      index: choice.index,
      message: {
        role: choice.message.role,
        content: choice.message.content === "" && calls.length ? null : choice.message.content,
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        ...(calls.length ? { tool_calls: calls } : {}),
      },
      finish_reason: choice.finish_reason,
      logprobs: null,
    }],
    ...(completion.usage ? { usage: completion.usage } : {}),
  };
}

Deno.test("encoder: small reasoning and text pieces accumulate (OpenAI SDK) into toChatCompletion", async () => {
  for (const answer of [full, textOnly, toolsOnly]) {
    const events = encode(answer, true);
    // One chunk per piece fed: small deltas are neither merged nor split.
    const contentChunks = deltas(events).filter((d) => d.content).length;
    assert.equal(contentChunks, trickle(answer.message.content).length);
    assert.deepEqual(await sdkCompletion(events, true), toChatCompletion(answer));
  }
});

Deno.test("encoder: every chunk carries the header's id, created and model", () => {
  const header: AnswerHeader = {
    id: "hdr",
    model: "served-name",
    created: 42,
    inputTokens: 120,
    cachedTokens: 64,
  };
  const encoder = openaiChatAdapter.streamEncoder(header, request(true));
  const events = [...encoder.start(), ...encoder.text("hi"), ...encoder.finish(textOnly)];
  for (const chunk of chunksOf(events)) {
    assert.equal(chunk.id, "chatcmpl-hdr");
    assert.equal(chunk.object, "chat.completion.chunk");
    assert.equal(chunk.created, 42);
    assert.equal(chunk.model, "served-name");
  }
});

Deno.test("encoder: start is the role chunk, deltas map to reasoning_content/content, empty emits nothing", () => {
  const encoder = streamEncoder(answerHeader(full), request());
  assert.deepEqual(encoder.start(), [{
    data: JSON.stringify({
      id: "chatcmpl-turn7",
      object: "chat.completion.chunk",
      created: full.created,
      model: full.model,
      choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }],
    }),
  }]);
  assert.deepEqual(encoder.reasoning(""), []);
  assert.deepEqual(deltas(encoder.reasoning("hmm")), [{ reasoning_content: "hmm" }]);
  assert.deepEqual(encoder.text(""), []);
  assert.deepEqual(deltas(encoder.text("ok")), [{ content: "ok" }]);

  const long = "😀".repeat(DELTA_SIZE * 2 + 1);
  const pieces = deltas(encoder.text(long)).map((d) => d.content ?? "");
  assert.deepEqual(pieces.map((p) => Array.from(p).length), [DELTA_SIZE, DELTA_SIZE, 1]);
  assert.equal(pieces.join(""), long);
});

Deno.test("encoder: text only streams role, content, stop, [DONE]", () => {
  const events = encode(textOnly);
  const kinds = deltas(events).map((d) => Object.keys(d).join(","));
  assert.equal(kinds[0], "role,content");
  assert.ok(kinds.slice(1, -1).every((kind) => kind === "content"));
  assert.equal(kinds.at(-1), "");
  assert.equal(chunksOf(events).at(-1)?.choices[0].finish_reason, "stop");
  assert.equal(events.at(-1)?.data, "[DONE]");
});

Deno.test("encoder: tool calls only — finish sends the fragments exactly as toStreamEvents", () => {
  const encoder = streamEncoder(answerHeader(toolsOnly), request());
  const events = [...encoder.start(), ...encoder.finish(toolsOnly)];
  assert.deepEqual(events, toStreamEvents(toolsOnly, request()));
  const starts = deltas(events).flatMap((d) => d.tool_calls ?? []).filter((part) => part.id);
  assert.deepEqual(starts, [
    { index: 0, id: "call_r", type: "function", function: { name: "read", arguments: "" } },
    { index: 1, id: "call_p", type: "custom", custom: { name: "apply_patch", input: "" } },
  ]);
  assert.equal(chunksOf(events).at(-1)?.choices[0].finish_reason, "tool_calls");
});

Deno.test("encoder: finish completes partly streamed reasoning and unstreamed text", async () => {
  const reasoning = full.message.reasoning_content ?? "";
  const events = encode(full, false, { reasoning: reasoning.slice(0, 30), text: "" });
  const ds = deltas(events);
  assert.equal(ds.map((d) => d.reasoning_content ?? "").join(""), reasoning);
  assert.equal(ds.map((d) => d.content ?? "").join(""), full.message.content);
  const { usage: _usage, ...expected } = toChatCompletion(full);
  assert.deepEqual(await sdkCompletion(events, false), expected);
});

Deno.test("encoder: a streamed prefix the final text contradicts gets nothing more, no throw", () => {
  const encoder = streamEncoder(answerHeader(full), request());
  const streamed = [...encoder.start(), ...encoder.reasoning("Not"), ...encoder.text("Other")];
  const finish = encoder.finish(full);
  const finishDeltas = deltas(finish);
  assert.ok(
    finishDeltas.every((d) => d.reasoning_content === undefined && d.content === undefined),
  );
  assert.equal(finishDeltas.flatMap((d) => d.tool_calls ?? []).filter((p) => p.id).length, 2);
  assert.equal(chunksOf(finish).at(-1)?.choices[0].finish_reason, "tool_calls");
  assert.equal(finish.at(-1)?.data, "[DONE]");
  assert.equal(deltas(streamed).map((d) => d.content ?? "").join(""), "Other");
});

Deno.test("encoder: usage chunk (choices: []) only with includeUsage, [DONE] last and once", () => {
  for (const includeUsage of [false, true]) {
    const events = encode(full, includeUsage);
    assert.equal(events.at(-1)?.data, "[DONE]");
    assert.equal(events.filter((e) => e.data === "[DONE]").length, 1);
    const usageChunks = chunksOf(events).filter((chunk) => chunk.choices.length === 0);
    if (!includeUsage) {
      assert.equal(usageChunks.length, 0);
      assert.ok(chunksOf(events).every((chunk) => chunk.usage === undefined));
      continue;
    }
    assert.equal(usageChunks.length, 1);
    assert.equal(events.at(-2)?.data, JSON.stringify(usageChunks[0]));
    assert.deepEqual(usageChunks[0].usage, {
      prompt_tokens: 120,
      completion_tokens: 80,
      total_tokens: 200,
      prompt_tokens_details: { cached_tokens: 64 },
      completion_tokens_details: { reasoning_tokens: 20 },
    });
  }
});

Deno.test("toStreamEvents is the encoder fed whole reasoning and text", () => {
  for (const answer of [full, textOnly, toolsOnly]) {
    const encoder = streamEncoder(answerHeader(answer), request(true));
    assert.deepEqual(toStreamEvents(answer, request(true)), [
      ...encoder.start(),
      ...encoder.reasoning(answer.message.reasoning_content ?? ""),
      ...encoder.text(answer.message.content),
      ...encoder.finish(answer),
    ]);
  }
});
