/**
 * Nemotron 3 (Nano, Super) on a tokenizer double (the Qwen3 vocabulary, which holds every
 * Nemotron 3 marker, with a template double: `tests/support/tokenizer_doubles.ts`; no package
 * ships Nemotron's tokenizer files), checked against `renderers` `nemotron-3` over generated
 * conversations with the XML format's hard cases, with history thinking truncated (the template's
 * default) and kept (`truncate_history_thinking=false`, append-only).
 *
 * Where `renderers` departs from the template: it writes the JSON of tool declarations (`enum`,
 * `required`, other schema keys) with Python's default `ensure_ascii=True`, where the template's
 * `tojson` (as `transformers` defines it) keeps non-ASCII text.
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { NemotronTextRenderer } from "../../model/mod.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { trimmed } from "./canonical_forms.ts";
import { XML_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("nemotron-3");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

const generator = { typedArguments: true, markup: XML_MARKUP };

for (const [i, truncate] of [true, false].entries()) {
  const asRenderers = new NemotronTextRenderer({
    enableThinking: true,
    truncateHistoryThinking: truncate,
    asciiDeclarations: true,
  });
  registerFamilyChecks({
    label: "nemotron-3" + (truncate ? "" : " truncate_history_thinking=false"),
    model: {
      dir: DIR,
      family: "nemotron-3",
      templateKwargs: { truncate_history_thinking: truncate },
    },
    reference: {
      renderer: "nemotron-3",
      config: { enable_thinking: true, truncate_history_thinking: truncate },
      deviation: {
        what: "renderers writes tool-declaration JSON with ensure_ascii=True",
        text: (messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean) =>
          asRenderers.render(messages, tools, { addGenerationPrompt: prompt }),
      },
    },
    generator,
    canonical: trimmed,
    count: truncate ? 80 : 60,
    firstSeed: 70001 + 1000 * i,
  });
}
