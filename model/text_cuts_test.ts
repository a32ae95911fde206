/** Cutting long text at token-safe places gives the same ids as tokenizing it whole. */
import assert from "node:assert/strict";
import { chunkText, cutsAreSafe } from "./text_cuts.ts";
import { PolicyModel } from "./policy_model.ts";
import { Rng, toolResult, userMessage } from "../tests/invariants/random_text.ts";

Deno.test("chunkText: pieces join back to the text, cut only where allowed", () => {
  const text = "alpha beta\ngamma delta\n\n  indented\nend";
  for (const size of [1, 3, 6, 100]) {
    const pieces = chunkText(text, size);
    assert.equal(pieces.join(""), text);
    for (const p of pieces.slice(1)) assert.match(p, /^( \p{L}|\p{L})/u, JSON.stringify(p));
  }
  assert.deepEqual(chunkText("aaaaaaaaaa", 3), ["aaaaaaaaaa"], "no safe place: whole");
});

Deno.test("long text tokenized piece by piece: the same ids as whole (Qwen3, 300 generated texts)", async () => {
  const model = await PolicyModel.load();
  const encode = (t: string) => model.tokenizer.encode(t);
  assert.ok(await cutsAreSafe(encode), "the Qwen3 tokenizer passes the load-time check");
  const rng = new Rng(12);
  for (let n = 0; n < 300; n++) {
    let text = "";
    while (text.length < 3000) {
      text += (rng.chance(0.5) ? toolResult(rng) : userMessage(rng)) + "\n";
    }
    const whole = await encode(text);
    const pieces: number[] = [];
    for (const p of chunkText(text, rng.int(8, 400))) pieces.push(...await encode(p));
    assert.deepEqual(pieces, whole, `text ${n}: ${JSON.stringify(text.slice(0, 200))}`);
  }
});

Deno.test("cutsAreSafe: a tokenizer that merges across the cut places is never cut", async () => {
  // A toy tokenizer with one id per two characters: any cut at an odd place changes its ids.
  const pairs = (t: string) =>
    Promise.resolve(Array.from({ length: Math.ceil(t.length / 2) }, (_, i) => t.charCodeAt(2 * i)));
  assert.equal(await cutsAreSafe(pairs), false);
});
