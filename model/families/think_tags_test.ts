/**
 * The streaming prefix guarantee of `ThinkStreamParser` under every rule set the families use,
 * on random id sequences (think tags anywhere, tool calls, end-of-turn ids in the middle, lone
 * UTF-8 bytes, whitespace runs), fed in random chunks.
 */
import assert from "node:assert/strict";
import { PolicyModel } from "../policy_model.ts";
import { Rng } from "../../tests/invariants/random_text.ts";
import { streamAgainstParse } from "../../tests/support/streamed_prefix.ts";

const opened = await PolicyModel.load({ family: "qwen3.5" });
const closed = await PolicyModel.load({
  family: "qwen3.5",
  templateKwargs: { enable_thinking: false },
});
const qwen3 = await PolicyModel.load();

async function pool(m: PolicyModel): Promise<number[][]> {
  const words = [
    "the",
    " answer",
    " 42",
    ".",
    " 🫝",
    "中文",
    "\n",
    "\n\n",
    "  ",
    " \t",
    "<tool",
    "x</",
    "\u0085",
  ];
  const out: number[][] = [];
  for (const w of words) out.push(await m.tokenizer.encode(w));
  for (
    const t of ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_end|>", "<|endoftext|>"]
  ) {
    out.push([m.idOf(t)!]);
  }
  const call = "\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n";
  out.push([m.idOf("<tool_call>")!, ...await m.tokenizer.encode(call), m.idOf("</tool_call>")!]);
  // Lone bytes of a 4-byte character.
  out.push((await m.tokenizer.encode("𡚴")).slice(0, 1));
  return out;
}

async function property(m: PolicyModel, seed: number, count: number) {
  const parts = await pool(m);
  const rng = new Rng(seed);
  let streamed = 0;
  for (let i = 0; i < count; i++) {
    // Half the outputs open with `<think>` (without it, nothing streams unless the prompt opened it).
    const ids: number[] = rng.chance(0.5) ? [m.idOf("<think>")!] : [];
    for (let n = rng.int(0, 30); n > 0; n--) ids.push(...rng.pick(parts));
    const chunk = () => rng.int(1, 6);
    const { sent } = await streamAgainstParse(m, ids, { chunk, label: `#${i}` });
    if (sent.reasoning || sent.text) streamed++;
  }
  assert.ok(streamed > count / 5, `only ${streamed} of ${count} streamed anything`);
}

Deno.test("think tags: prompt opens reasoning, whitespace trimmed, tool calls close it", async () => {
  assert.equal(opened.format.quirks.promptOpensReasoning, true);
  await property(opened, 1, 400);
});

Deno.test("think tags: prompt closed reasoning (thinking off), whitespace trimmed", async () => {
  await property(closed, 2, 400);
});

Deno.test("think tags: Qwen3 rules (newlines trimmed, reasoning decided by the output)", async () => {
  await property(qwen3, 3, 400);
});
