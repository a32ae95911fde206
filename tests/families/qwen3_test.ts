/**
 * Qwen3 (hermes JSON calls, the model's own template) through the family checks, with argument
 * strings holding `</tool_call>` and whole calls, against `renderers`' `qwen3` (the transformers
 * cross-check of the same family is `tests/invariants/prefix_invariant_test.ts`).
 */
import type { AssistantMessage } from "../../canonical/mod.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { HERMES_MARKUP } from "./markup.ts";

/** The Qwen3 template renders no think block for an earlier turn with empty reasoning. */
function canonical(m: AssistantMessage): AssistantMessage {
  if (m.reasoning_content !== "") return m;
  const { reasoning_content: _, ...rest } = m;
  return rest;
}

registerFamilyChecks({
  label: "qwen3",
  model: {},
  reference: { renderer: "qwen3", config: {} },
  generator: { typedArguments: true, markup: HERMES_MARKUP },
  canonical,
  count: 100,
  firstSeed: 30001,
});
