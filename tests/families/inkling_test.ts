/**
 * Thinking Machines' Inkling on a tokenizer double (the Qwen3 vocabulary plus Inkling's segment
 * markers, `tests/support/tokenizer_doubles.ts`; no package ships Inkling's tokenizer), checked
 * against `renderers` `inkling` over generated text conversations with JSON markup in arguments,
 * at the default effort and at `low`.
 */
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { inklingForm } from "./canonical_forms.ts";
import { INKLING_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("inkling");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

for (const [i, effort] of [undefined, "low"].entries()) {
  registerFamilyChecks({
    label: "inkling" + (effort ? ` reasoning_effort=${effort}` : ""),
    model: { dir: DIR, templateKwargs: effort ? { reasoning_effort: effort } : {} },
    reference: { renderer: "inkling", config: effort ? { reasoning_effort: effort } : {} },
    generator: { typedArguments: true, markup: INKLING_MARKUP },
    canonical: inklingForm,
    count: effort ? 30 : 60,
    firstSeed: 96001 + 1000 * i,
  });
}
