/**
 * Tencent Hy3 on a tokenizer double (the Qwen3 vocabulary plus Hy3's `:opensource` markers,
 * `tests/support/tokenizer_doubles.ts`; no package ships Hy3's tokenizer), checked against
 * `renderers` `hy3` over generated conversations with GLM-shaped markup in values: `no_think`
 * (the default) and `high` reasoning, `preserved_thinking` as the template defaults it. Where
 * `renderers` departs: it hoists a system message after the first into the header (the template
 * does); rollgate renders it in place as a user turn (counted).
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { Hy3TextRenderer } from "../../model/mod.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { withoutReasoning, withReasoning } from "./canonical_forms.ts";
import { HY3_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("hy3");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

const generator = { typedArguments: true, markup: HY3_MARKUP };

const VARIANTS = [
  { effort: "no_think", canonical: withoutReasoning, count: 60 },
  { effort: "high", canonical: withReasoning, count: 40 },
] as const;

for (const [i, { effort, canonical, count }] of VARIANTS.entries()) {
  const hoisted = new Hy3TextRenderer({ reasoningEffort: effort, hoistSystem: true });
  registerFamilyChecks({
    label: "hy3" + (effort === "no_think" ? "" : ` reasoning_effort=${effort}`),
    model: { dir: DIR, templateKwargs: { reasoning_effort: effort } },
    reference: {
      renderer: "hy3",
      config: { reasoning_effort: effort },
      deviation: {
        what: "renderers hoists a later system message into the header",
        text: (messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean) =>
          hoisted.render(messages, tools, { addGenerationPrompt: prompt }),
      },
    },
    generator,
    canonical,
    count,
    firstSeed: 95001 + 1000 * i,
  });
}
