/**
 * Poolside's Laguna 2.1 (XS-2.1 and S-2.1) on a tokenizer double (the Qwen3 vocabulary plus
 * Laguna's special tokens, `<tool_response>` as text as in Laguna's vocabulary,
 * `tests/support/tokenizer_doubles.ts`: no package ships Laguna's tokenizer), checked against
 * `renderers` (`laguna-xs-2.1`, `laguna-s-2.1`, `laguna-xs.2`, `laguna-m.1`) over generated
 * conversations with the format's hard cases: values holding `</arg_value>`, `<tool_call>` and
 * `</tool_call>`, booleans, floats, nested objects, unicode, parallel calls; thinking on and off,
 * S-2.1's `preserve_thinking`, both layouts.
 */
import {
  LAGUNA_XS2_TEMPLATE_DOUBLE,
  TEMPLATE_DOUBLES,
  tokenizerDoubleDir,
} from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { trimmed, withoutReasoning, withReasoning } from "./canonical_forms.ts";
import { GLM_MARKUP } from "./markup.ts";

const XS21 = await tokenizerDoubleDir("laguna");
// S-2.1's template reads `preserve_thinking` (and thinks by default).
const S21 = await tokenizerDoubleDir(
  "laguna",
  TEMPLATE_DOUBLES.laguna + "{% if preserve_thinking %}{% endif %}",
);
const XS2 = await tokenizerDoubleDir("laguna", LAGUNA_XS2_TEMPLATE_DOUBLE);
const M1 = await tokenizerDoubleDir(
  "laguna",
  LAGUNA_XS2_TEMPLATE_DOUBLE.replace("made by Poolside", ""),
);
globalThis.addEventListener("unload", () => {
  for (const dir of [XS21, S21, XS2, M1]) Deno.removeSync(dir, { recursive: true });
});

const generator = { typedArguments: true, markup: GLM_MARKUP };

/** XS.2 always has a system block (Poolside's default): `renderers` encodes its text apart. */
const XS2_SPLIT = "the system text from its closing `\\n</system>\\n` (`.\\n` is one Qwen3 token)";

registerFamilyChecks({
  label: "laguna xs-2.1",
  model: { dir: XS21, family: "laguna" },
  reference: { renderer: "laguna-xs-2.1", config: {} },
  generator,
  canonical: withoutReasoning,
  count: 60,
  firstSeed: 80001,
});

registerFamilyChecks({
  label: "laguna xs-2.1 thinking",
  model: { dir: XS21, family: "laguna", templateKwargs: { enable_thinking: true } },
  reference: { renderer: "laguna-xs-2.1", config: { enable_thinking: true } },
  generator,
  canonical: withReasoning,
  count: 60,
  firstSeed: 81001,
});

registerFamilyChecks({
  label: "laguna s-2.1",
  model: { dir: S21, family: "laguna" },
  reference: { renderer: "laguna-s-2.1", config: {} },
  generator,
  canonical: withReasoning,
  count: 60,
  firstSeed: 82001,
});

registerFamilyChecks({
  label: "laguna s-2.1 preserve_thinking, thinking off",
  model: {
    dir: S21,
    family: "laguna",
    templateKwargs: { enable_thinking: false, preserve_thinking: true },
  },
  reference: {
    renderer: "laguna-s-2.1",
    config: { enable_thinking: false, preserve_thinking: true },
  },
  generator,
  canonical: withoutReasoning,
  count: 30,
  firstSeed: 83001,
});

registerFamilyChecks({
  label: "laguna xs.2",
  model: { dir: XS2, family: "laguna" },
  reference: { renderer: "laguna-xs.2", config: {}, splitsEveryRender: XS2_SPLIT },
  generator,
  canonical: (m) => trimmed(withoutReasoning(m)),
  count: 40,
  firstSeed: 84001,
});

registerFamilyChecks({
  label: "laguna xs.2 thinking",
  model: { dir: XS2, family: "laguna", templateKwargs: { enable_thinking: true } },
  reference: {
    renderer: "laguna-xs.2",
    config: { enable_thinking: true },
    splitsEveryRender: XS2_SPLIT,
  },
  generator,
  canonical: (m) => trimmed(withReasoning(m)),
  count: 40,
  firstSeed: 85001,
});

registerFamilyChecks({
  label: "laguna m.1 thinking",
  model: { dir: M1, family: "laguna", templateKwargs: { enable_thinking: true } },
  reference: { renderer: "laguna-m.1", config: { enable_thinking: true } },
  generator,
  canonical: (m) => trimmed(withReasoning(m)),
  count: 40,
  firstSeed: 86001,
});
