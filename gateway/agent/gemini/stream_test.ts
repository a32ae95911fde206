import assert from "node:assert/strict";
import { answerFromRecord, loadGeminiSession, recordedChunks } from "./__fixtures__/gemini_cli.ts";
import { streamErrorEvents, toStreamEvents } from "./stream.ts";
import { reasoningOf } from "./thought_signature.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const partOf = (chunk: Json) => chunk.candidates[0].content.parts[0];
const kind = (part: Json) => part.functionCall ? "call" : part.thought ? "thought" : "text";

/** Part kinds in order, runs of one kind collapsed: how many pieces a text is cut into is free. */
function shape(chunks: Json[]): string[] {
  const out: string[] = [];
  for (const c of chunks) if (out.at(-1) !== kind(partOf(c))) out.push(kind(partOf(c)));
  return out;
}

const joined = (chunks: Json[], k: string) =>
  chunks.map(partOf).filter((p) => kind(p) === k).map((p) => p.text).join("");

for (const [i, record] of loadGeminiSession().entries()) {
  Deno.test(`fixture reply ${i + 1}: the chunks the recording Gemini CLI accepted`, () => {
    const recorded = recordedChunks(record);
    const events = toStreamEvents(answerFromRecord(record));
    for (const e of events) assert.ok(e.event === undefined && !e.bare, "data: lines only");
    const ours = events.map((e) => JSON.parse(e.data));

    assert.deepEqual(shape(ours), shape(recorded));
    for (const k of ["thought", "text"]) assert.equal(joined(ours, k), joined(recorded, k));
    const calls = (cs: Json[]) =>
      cs.map(partOf).filter((p) => p.functionCall).map((p) => p.functionCall);
    assert.deepEqual(calls(ours), calls(recorded));
    // One part per chunk, the recording's envelope; the finish reason and full usage come last.
    const envelope = ({ candidates: _, ...rest }: Json) => rest;
    assert.deepEqual(
      ours.slice(0, -1).map(envelope),
      ours.slice(0, -1).map(() => envelope(recorded[0])),
    );
    assert.deepEqual(envelope(ours.at(-1)), envelope(recorded.at(-1)));
    for (const c of ours) {
      assert.equal(c.candidates[0].content.parts.length, 1);
      assert.equal(c.candidates[0].content.role, "model");
      assert.equal(c.candidates[0].finishReason, c === ours.at(-1) ? "STOP" : undefined);
    }
    // The signature: the API's on the last part, the gateway's (with the reasoning) on the first
    // part after the thoughts, which is the part whose fields the CLI keeps.
    const signed = ours.map(partOf).filter((p) => p.thoughtSignature);
    assert.equal(signed.length, 1);
    assert.equal(signed[0], ours.map(partOf).find((p) => !p.thought));
    assert.equal(reasoningOf(signed[0].thoughtSignature), joined(recorded, "thought"));
    assert.match(
      recorded.map(partOf).findLast((p: Json) => p.thoughtSignature).thoughtSignature,
      /^fakesig_/,
    );
  });
}

Deno.test("an error once the stream has started: the bare error object, no data: framing", () => {
  assert.deepEqual(streamErrorEvents(503, "engine down"), [{
    data: '{"error":{"code":503,"message":"engine down","status":"UNAVAILABLE"}}',
    bare: true,
  }]);
});
