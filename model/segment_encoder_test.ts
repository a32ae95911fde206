import assert from "node:assert/strict";
import { generateConversations, Rng } from "../tests/invariants/conversation_generator.ts";
import { PolicyModel } from "./policy_model.ts";
import { idCacheEntryBytes } from "./id_cache.ts";
import { EncodeLane } from "./encode_lane.ts";
import { LONG_TEXT, SegmentEncoder } from "./segment_encoder.ts";
import type { TextTokenizer } from "./tokenizer.ts";

const model = await PolicyModel.load();
const tokenizer = model.tokenizer;

/** The real tokenizer, counting the texts it is asked to encode. */
function counting(): TextTokenizer & { calls: string[] } {
  const calls: string[] = [];
  return {
    engine: tokenizer.engine,
    vocabSize: tokenizer.vocabSize,
    calls,
    encode(text: string) {
      calls.push(text);
      return tokenizer.encode(text);
    },
    decode: (ids: number[]) => tokenizer.decode(ids),
    addedTokens: tokenizer.addedTokens,
    withoutAddedTokens: () => tokenizer.withoutAddedTokens(),
  };
}

/** Rendered conversations (with and without generation prompt) from the generator. */
async function renderedTexts(count: number): Promise<string[]> {
  const texts: string[] = [];
  for (const c of generateConversations(9000, count)) {
    texts.push((await model.renderFull(c.messages, c.tools, false)).text);
    const t = c.turns.at(-1)!;
    texts.push((await model.renderFull(c.messages.slice(0, t.index), c.tools)).text);
  }
  return texts;
}

Deno.test("SegmentEncoder: equals a plain encode on random rendered texts", async () => {
  const encoder = new SegmentEncoder(tokenizer, "<|im_start|>");
  const texts = await renderedTexts(60);
  // Also splices: segments of different conversations in random order.
  const rng = new Rng(7);
  const segments = texts.flatMap((t) => t.split(/(?=<\|im_start\|>)/));
  for (let i = 0; i < 40; i++) {
    texts.push(Array.from({ length: rng.int(1, 12) }, () => rng.pick(segments)).join(""));
  }
  for (const text of texts) {
    assert.deepEqual(await encoder.encode(text), await tokenizer.encode(text));
  }
});

Deno.test("SegmentEncoder: texts without a turn start, empty text, a leading fragment", async () => {
  const encoder = new SegmentEncoder(tokenizer, "<|im_start|>");
  assert.deepEqual(await encoder.encode(""), []);
  for (const text of ["plain text only", "\n<|im_start|>user\nhi<|im_end|>\n", "a<|im_start|>"]) {
    assert.deepEqual(await encoder.encode(text), await tokenizer.encode(text), text);
  }
});

Deno.test("SegmentEncoder: a segment is kept the second time it comes; hits skip the tokenizer; results are not shared", async () => {
  const inner = counting();
  const encoder = new SegmentEncoder(inner, "<|im_start|>");
  const text = "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n";
  const assistant = "<|im_start|>assistant\n";
  const first = await encoder.encode(text);
  assert.equal(inner.calls.length, 2);
  first.push(-1); // a caller mutating its copy must not corrupt the cache
  // Seen once: encoded again (and kept now); the new segment only remembered.
  assert.deepEqual(
    await encoder.encode(text + assistant),
    await tokenizer.encode(text + assistant),
  );
  assert.equal(inner.calls.length, 5);
  const third = await encoder.encode(text + assistant);
  assert.deepEqual(inner.calls.slice(5), [assistant]);
  assert.deepEqual(third, await tokenizer.encode(text + assistant));
  assert.deepEqual(await encoder.encode(text + assistant), third);
  assert.equal(inner.calls.length, 6);
});

Deno.test("SegmentEncoder: segments that never come back are never kept", async () => {
  const inner = counting();
  const encoder = new SegmentEncoder(inner, "<|im_start|>");
  const turn = (i: number) =>
    `<|im_start|>user\n<tool_response>output ${i}</tool_response><|im_end|>\n`;
  // Each once (a turn's delta), then each once more: none was kept the first time.
  for (let i = 0; i < 200; i++) await encoder.encode(turn(i));
  for (let i = 0; i < 200; i++) await encoder.encode(turn(i));
  assert.equal(inner.calls.length, 400);
  for (let i = 0; i < 200; i++) await encoder.encode(turn(i));
  assert.equal(inner.calls.length, 400);
});

Deno.test("SegmentEncoder: eviction keeps results exact and the cache bounded", async () => {
  const inner = counting();
  const seg = (i: number) => `<|im_start|>user\nmessage ${i}<|im_end|>\n`;
  // Room for two segments' ids, not three.
  const entry = idCacheEntryBytes(seg(0), await tokenizer.encode(seg(0)));
  const encoder = new SegmentEncoder(inner, "<|im_start|>", {
    cacheBytes: 2 * entry + entry / 2,
  });
  for (let i = 0; i < 5; i++) {
    await encoder.encode(seg(i));
    await encoder.encode(seg(i)); // the second time: kept
  }
  assert.equal(inner.calls.length, 10);
  await encoder.encode(seg(4)); // most recent: cached
  assert.equal(inner.calls.length, 10);
  await encoder.encode(seg(0)); // evicted long ago: encoded again
  assert.equal(inner.calls.length, 11);
  assert.deepEqual(await encoder.encode(seg(0) + seg(4)), await tokenizer.encode(seg(0) + seg(4)));
});

Deno.test("SegmentEncoder: a turn-start text with regex metacharacters is matched literally", async () => {
  const encoder = new SegmentEncoder(tokenizer, "[.*]");
  const text = "a[.*]b[.*]c.*d";
  assert.deepEqual(await encoder.encode(text), await tokenizer.encode(text));
  const inner = counting();
  await new SegmentEncoder(inner, "[.*]").encode(text);
  assert.deepEqual(inner.calls, ["a", "[.*]b", "[.*]c.*d"]);
});

Deno.test("SegmentEncoder: long texts take the lane one at a time, short ones pass beside them", async () => {
  let inFlight = 0, most = 0;
  const slow: Pick<TextTokenizer, "encode"> = {
    async encode(text) {
      // Counted until the ids are back: a long text's next segment starts in the same chain of
      // microtasks, so a short text started from a timer always finds one long encode running.
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      const ids = await tokenizer.encode(text);
      inFlight--;
      return ids;
    },
  };
  const lane = new EncodeLane(1);
  const encoder = new SegmentEncoder(slow, "<|im_start|>", { longLane: lane });
  const message = (i: number, n: number) =>
    `<|im_start|>user\n${`line ${i} of a long tool output\n`.repeat(n)}<|im_end|>\n`;
  // Three cold first turns of many segments each, well over LONG_TEXT.
  const long = [0, 1, 2].map((t) =>
    Array.from({ length: 40 }, (_, i) => message(100 * t + i, 60)).join("")
  );
  assert.ok(long.every((text) => text.length >= LONG_TEXT));
  const cold = Promise.all(long.map((text) => encoder.encode(text)));
  await new Promise((r) => setTimeout(r, 5));
  assert.ok(lane.waiting > 0, "the other long texts wait for the lane");
  const warm = await encoder.encode(message(999, 3)); // a warm turn's delta: not queued
  assert.ok(lane.waiting > 0, "the short text was done while long ones still waited");
  const results = await cold;
  assert.equal(most, 2, "one long encode at a time (+ the short one beside it)");
  for (const [i, text] of long.entries()) {
    assert.deepEqual(results[i], await tokenizer.encode(text));
  }
  assert.deepEqual(warm, await tokenizer.encode(message(999, 3)));
  // Kept the second time: a long text whose segments are all known does not queue.
  assert.deepEqual(await encoder.encode(long[0]), results[0]);
  most = 0;
  assert.deepEqual(await encoder.encode(long[0]), results[0]);
  assert.equal(most, 0);
});

Deno.test("SegmentEncoder: long texts share the lane slice by slice: a huge one holds another up by one slice at a time", async () => {
  const log: string[] = [];
  const tagged: Pick<TextTokenizer, "encode"> = {
    async encode(text) {
      await new Promise((r) => setTimeout(r, 1));
      const ids = await tokenizer.encode(text);
      log.push(text.startsWith("HUGE") || text.includes("huge line") ? "huge" : "other");
      return ids;
    },
  };
  const lane = new EncodeLane(1);
  const encoder = new SegmentEncoder(tagged, "<|im_start|>", { longLane: lane });
  // One segment of ~800 kB (a 32 MB count_tokens, scaled down): ~50 pieces.
  const huge = `HUGE<|im_start|>user\n${"a huge line of a pasted log file\n".repeat(25_000)}`;
  const other = Array.from(
    { length: 12 },
    (_, i) => `<|im_start|>user\n${`line ${i} of another rollout's first turn\n`.repeat(150)}`,
  ).join("");
  assert.ok(other.length >= LONG_TEXT);
  const hugeDone = encoder.encode(huge);
  while (log.filter((t) => t === "huge").length < 5) await new Promise((r) => setTimeout(r, 1));
  const hugeBefore = log.filter((t) => t === "huge").length;
  const otherIds = await encoder.encode(other);
  const hugeDuring = log.filter((t) => t === "huge").length - hugeBefore;
  const otherSlices = log.filter((t) => t === "other").length;
  assert.ok(
    hugeDuring <= otherSlices + 1,
    `the huge text took ${hugeDuring} slices while the other took its ${otherSlices}`,
  );
  assert.ok(hugeDuring < 40, "the other did not wait for the huge one to end");
  assert.deepEqual(otherIds, await tokenizer.encode(other));
  assert.deepEqual(await hugeDone, await tokenizer.encode(huge));
});
