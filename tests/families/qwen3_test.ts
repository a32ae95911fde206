/**
 * Qwen3 (hermes JSON calls, the model's own template) through the family checks, with argument
 * strings holding `</tool_call>` and whole calls, against `renderers`' `qwen3` (the transformers
 * cross-check of the same family is `tests/invariants/prefix_invariant_test.ts`).
 */
import { registerFamilyChecks } from "./family_check.ts";
import { withoutEmptyReasoning } from "./canonical_forms.ts";
import { HERMES_MARKUP } from "./markup.ts";

registerFamilyChecks({
  label: "qwen3",
  model: {},
  reference: { renderer: "qwen3", config: {} },
  generator: { typedArguments: true, markup: HERMES_MARKUP },
  canonical: withoutEmptyReasoning,
  count: 100,
  firstSeed: 30001,
});
