/**
 * Poolside's Laguna 2.1 (XS-2.1 and S-2.1) on a tokenizer double (the Qwen3 vocabulary plus
 * Laguna's special tokens, `<tool_response>` as text as in Laguna's vocabulary,
 * `tests/support/tokenizer_doubles.ts`: no package ships Laguna's tokenizer), checked against
 * `renderers` (`laguna-xs-2.1`, `laguna-s-2.1`) over generated conversations with the format's
 * hard cases: values holding `</arg_value>`, `<tool_call>` and `</tool_call>`, booleans, floats,
 * nested objects, unicode, parallel calls; thinking on and off, S-2.1's `preserve_thinking`.
 */
import type { AssistantMessage } from "../../canonical/mod.ts";
import { TEMPLATE_DOUBLES, tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { withoutReasoning } from "./canonical_forms.ts";
import { GLM_MARKUP } from "./markup.ts";

const XS21 = await tokenizerDoubleDir("laguna");
// S-2.1's template reads `preserve_thinking` (and thinks by default).
const S21 = await tokenizerDoubleDir(
  "laguna",
  TEMPLATE_DOUBLES.laguna + "{% if preserve_thinking %}{% endif %}",
);
globalThis.addEventListener("unload", () => {
  for (const dir of [XS21, S21]) Deno.removeSync(dir, { recursive: true });
});

const generator = { typedArguments: true, markup: GLM_MARKUP };

/** With thinking the prompt opened `<think>`: every answer has reasoning (empty too), verbatim. */
function withReasoning(m: AssistantMessage): AssistantMessage {
  return { ...m, reasoning_content: m.reasoning_content ?? "" };
}

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
