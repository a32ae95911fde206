import assert from "node:assert/strict";
import { splitDeltas, unsentText } from "./text_deltas.ts";

Deno.test("splitDeltas: whitespace cuts, hard cuts, surrogate pairs, empty", () => {
  assert.deepEqual(splitDeltas(""), []);
  assert.deepEqual(splitDeltas("short"), ["short"]);
  assert.deepEqual(splitDeltas("aaa bbb ccc", 5), ["aaa ", "bbb ", "ccc"]);
  assert.deepEqual(splitDeltas("abcdefghij", 4), ["abcd", "efgh", "ij"]);
  assert.deepEqual(splitDeltas("abcde", 2), ["ab", "cd", "e"]);
  assert.deepEqual(splitDeltas("😀😀😀", 2), ["😀😀", "😀"]);
  assert.deepEqual(splitDeltas("🙂🙂🙂", 2), ["🙂🙂", "🙂"]);
  const long = "word ".repeat(100);
  assert.equal(splitDeltas(long).join(""), long);
  assert.ok(splitDeltas(long).every((p) => Array.from(p).length <= 64));
});

Deno.test("unsentText: the rest after a streamed prefix; nothing when it is not a prefix", () => {
  assert.equal(unsentText("abc", ""), "abc");
  assert.equal(unsentText("abc", "ab"), "c");
  assert.equal(unsentText("abc", "abc"), "");
  assert.equal(unsentText("abc", "x"), "");
});
