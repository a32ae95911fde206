import assert from "node:assert/strict";
import { answerHeader, type TurnAnswer } from "../../../canonical/mod.ts";
import type { AnswerStreamEncoder, SseEvent } from "../../protocol.ts";
import { answerFromRecord, loadGeminiSession } from "./__fixtures__/gemini_cli.ts";
import { KEEP_ALIVE, streamEncoder, toStreamEvents } from "./stream.ts";
import { splitDeltas } from "../text_deltas.ts";
import { reasoningOf } from "./thought_signature.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const parts = (events: SseEvent[]): Json[] =>
  events.map((e) => JSON.parse(e.data).candidates[0].content.parts[0]);
const text = (ps: Json[], thought: boolean) =>
  ps.filter((p) => p.text !== undefined && !!p.thought === thought).map((p) => p.text).join("");

/** The answer streamed in pieces of up to 3 code points: reasoning, text, finish. */
function streamInPieces(answer: TurnAnswer, encoder: AnswerStreamEncoder): SseEvent[] {
  const events = [...encoder.start()];
  for (const p of splitDeltas(answer.message.reasoning_content ?? "", 3)) {
    events.push(...encoder.reasoning(p));
  }
  for (const p of splitDeltas(answer.message.content, 3)) events.push(...encoder.text(p));
  return [...events, ...encoder.finish(answer)];
}

const answer = (message: Partial<TurnAnswer["message"]>): TurnAnswer => ({
  id: "t7",
  model: "policy",
  message: { role: "assistant", content: "", ...message },
  stopReason: message.tool_calls ? "tool_calls" : "stop",
  usage: { input_tokens: 50, output_tokens: 20, reasoning_tokens: 6, cached_tokens: 40 },
  created: 0,
});

for (const [i, record] of loadGeminiSession().entries()) {
  Deno.test(`fixture reply ${i + 1}: streamed in pieces, the same answer as sent whole`, () => {
    const whole = answerFromRecord(record);
    const streamed = streamInPieces(whole, streamEncoder(answerHeader(whole)));
    const all = toStreamEvents(whole);
    const [a, b] = [parts(streamed), parts(all)];
    for (const thought of [true, false]) assert.equal(text(a, thought), text(b, thought));
    assert.deepEqual(a.filter((p) => p.functionCall), b.filter((p) => p.functionCall));
    const signature = (ps: Json[]) => ps.find((p) => p.thoughtSignature)?.thoughtSignature;
    assert.equal(signature(a), signature(b));
    assert.ok(a.find((p) => !p.thought).thoughtSignature, "the first part after the thoughts");
    assert.deepEqual(JSON.parse(streamed.at(-1)!.data), JSON.parse(all.at(-1)!.data));
  });
}

Deno.test("live text, nothing left at the end: a closing empty text part with the finish", () => {
  const done = answer({ content: "Hello there", reasoning_content: "say hi" });
  const encoder = streamEncoder(answerHeader(done));
  assert.deepEqual(encoder.start(), [], "Gemini has no opening event");
  const thoughts = encoder.reasoning("say hi");
  assert.deepEqual(parts(thoughts), [{ text: "say hi", thought: true }]);
  const [first] = parts(encoder.text("Hello"));
  assert.equal(reasoningOf(first.thoughtSignature), "say hi");
  assert.deepEqual(parts(encoder.text(" there")), [{ text: " there" }], "signed once");
  assert.deepEqual(encoder.reasoning("late"), [], "no thoughts after text");
  const end = encoder.finish(done);
  assert.equal(end.length, 1);
  const last = JSON.parse(end[0].data);
  assert.deepEqual(last.candidates[0], {
    content: { parts: [{ text: "" }], role: "model" },
    index: 0,
    finishReason: "STOP",
  });
  assert.deepEqual(last.usageMetadata, {
    promptTokenCount: 50,
    candidatesTokenCount: 14,
    totalTokenCount: 70,
    thoughtsTokenCount: 6,
    cachedContentTokenCount: 40,
  });
  assert.deepEqual(JSON.parse(thoughts[0].data).usageMetadata, {
    promptTokenCount: 50,
    totalTokenCount: 50,
  });
  assert.deepEqual(encoder.finish(done), [], "finish once");
  assert.deepEqual(encoder.text("more"), []);
});

Deno.test("reasoning streamed, then calls in finish: the first call carries the signature", () => {
  const calls = [
    { id: "call_a", name: "ls", arguments: '{"path": "."}' },
    { id: "call_b", name: "cat", arguments: '{"file": "x"}' },
  ];
  const done = answer({ reasoning_content: "look first", tool_calls: calls });
  const encoder = streamEncoder(answerHeader(done));
  encoder.reasoning("look ");
  const end = parts(encoder.finish(done));
  assert.deepEqual(end.map((p) => p.text ?? p.functionCall.id), ["first", "call_a", "call_b"]);
  assert.equal(reasoningOf(end[1].thoughtSignature), "look first");
  assert.equal(end[2].thoughtSignature, undefined);
  assert.deepEqual(encoder.finish(done), []);
});

Deno.test("a streamed text that is not a prefix of the final one: nothing more is sent for it", () => {
  const done = answer({ content: "Goodbye" });
  const encoder = streamEncoder(answerHeader(done));
  encoder.text("Hello");
  const end = parts(encoder.finish(done));
  assert.deepEqual(end, [{ text: "" }]);
});

Deno.test("keep-alive: an empty response chunk, never an SSE comment", () => {
  assert.deepEqual(KEEP_ALIVE, { data: "{}" });
});
