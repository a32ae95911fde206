/**
 * DeepSeek V3.1 on DeepSeek V3's real vocabulary with V3.1's added tokens (the named tokenizer
 * double of `tests/support/deepseek_v31_model.ts`), checked against `renderers`' DeepSeek V3
 * renderer with V3.1's format changes (`tests/reference/deepseek_v31_renderer.py`) over generated
 * conversations with the format's hard cases: arguments holding `<｜tool▁call▁end｜>` and whole
 * calls, booleans, floats, nested objects, unicode. The tool description goes to the reference in
 * the system message (its renderer lists no tools).
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { deepSeekToolsText } from "../../model/mod.ts";
import { deepSeekV31ModelDir } from "../support/deepseek_v31_model.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { withoutReasoning } from "./canonical_forms.ts";
import { DEEPSEEK_MARKUP } from "./markup.ts";

const dir = await deepSeekV31ModelDir();
const generator = { typedArguments: true, markup: DEEPSEEK_MARKUP };

/** The leading system messages with the tool description after them, as one system message. */
function toolsInSystem(messages: readonly Message[], tools: readonly ToolSpec[]) {
  let lead = 0;
  while (messages[lead]?.role === "system") lead++;
  const system = [...messages.slice(0, lead).map((m) => m.content), deepSeekToolsText(tools)]
    .filter((t) => t !== "").join("\n\n");
  const rest = messages.slice(lead);
  return {
    messages: system === "" ? rest : [{ role: "system" as const, content: system }, ...rest],
    tools: [],
  };
}

registerFamilyChecks({
  label: "deepseek-v3.1",
  model: { dir, family: "deepseek-v3.1" },
  reference: { renderer: "deepseek-v3.1", config: { thinking: false }, prepare: toolsInSystem },
  generator,
  canonical: withoutReasoning,
  count: 100,
  firstSeed: 40001,
});

registerFamilyChecks({
  label: "deepseek-v3.1 thinking",
  model: { dir, family: "deepseek-v3.1", templateKwargs: { thinking: true } },
  reference: { renderer: "deepseek-v3.1", config: { thinking: true }, prepare: toolsInSystem },
  generator,
  notPrefixStable: true,
  count: 50,
  firstSeed: 41001,
});
