/**
 * Gemma 4 on a tokenizer double (the Qwen3 vocabulary plus Gemma 4's turn, channel, tool and
 * image tokens, `tests/support/tokenizer_doubles.ts`; no package ships Gemma 4's tokenizer),
 * checked against `renderers` `gemma4` over generated text conversations with Gemma's call markup
 * in arguments, thinking off, in both template revisions (E2B/E4B; 26B/31B with the empty thought
 * channel).
 */
import { TEMPLATE_DOUBLES, tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { gemma4Form } from "./canonical_forms.ts";
import { GEMMA4_MARKUP } from "./markup.ts";

const SMALL = await tokenizerDoubleDir("gemma4");
const LARGE = await tokenizerDoubleDir(
  "gemma4",
  TEMPLATE_DOUBLES.gemma4 + "{{ '<|channel>thought\\n<channel|>' }}",
);
globalThis.addEventListener("unload", () => {
  for (const dir of [SMALL, LARGE]) Deno.removeSync(dir, { recursive: true });
});

for (
  const [i, { label, dir }] of [
    { label: "gemma4", dir: SMALL },
    { label: "gemma4 26B/31B", dir: LARGE },
  ].entries()
) {
  registerFamilyChecks({
    label,
    model: { dir },
    reference: { renderer: "gemma4" },
    generator: { typedArguments: true, markup: GEMMA4_MARKUP },
    canonical: gemma4Form,
    count: i === 0 ? 60 : 30,
    firstSeed: 98001 + 1000 * i,
  });
}
