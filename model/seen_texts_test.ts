import assert from "node:assert/strict";
import { fingerprint, SAMPLED_CHARS, SeenTexts } from "./seen_texts.ts";

Deno.test("SeenTexts: false at first sight, true after; distinct texts apart", () => {
  const seen = new SeenTexts(1 << 16);
  const texts = ["", "a", "b", "ab", "ba", "a tool's output\n".repeat(500), "x".repeat(100_000)];
  for (const t of texts) assert.equal(seen.see(t), false, JSON.stringify(t.slice(0, 20)));
  for (const t of texts) assert.equal(seen.see(t), true, JSON.stringify(t.slice(0, 20)));
});

Deno.test("SeenTexts: a slot another text took forgets the first", () => {
  const seen = new SeenTexts(1); // one slot: every text shares it
  assert.equal(seen.see("first"), false);
  assert.equal(seen.see("second"), false);
  assert.equal(seen.see("first"), false);
  assert.equal(seen.see("first"), true);
});

Deno.test("fingerprint: reads the length and a sample, never more than SAMPLED_CHARS characters", () => {
  const long = "y".repeat(SAMPLED_CHARS * 1000);
  // Every sampled position changes it; the length does.
  const step = Math.floor(long.length / SAMPLED_CHARS);
  for (const i of [0, step, 17 * step, (SAMPLED_CHARS - 1) * step]) {
    const other = long.slice(0, i) + "z" + long.slice(i + 1);
    assert.notEqual(fingerprint(other), fingerprint(long), `position ${i}`);
  }
  assert.notEqual(fingerprint(long + "y"), fingerprint(long));
  // A change between sampled positions does not (a shared fingerprint costs a cache entry only).
  const between = long.slice(0, 1) + "z" + long.slice(2);
  assert.equal(fingerprint(between), fingerprint(long));
  assert.notEqual(fingerprint(""), 0);
});
