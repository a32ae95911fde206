/**
 * Nemotron 3 (Nano, Super), Nemotron 3 Ultra and Nemotron 3.5 on a tokenizer double (the Qwen3 vocabulary, which holds every
 * Nemotron 3 marker, with a template double: `tests/support/tokenizer_doubles.ts`; no package
 * ships Nemotron's tokenizer files), checked against `renderers` `nemotron-3` over generated
 * conversations with the XML format's hard cases, with history thinking truncated (the template's
 * default) and kept (`truncate_history_thinking=false`, append-only); Ultra and 3.5 (their
 * `</think>` glue, `renderers` `nemotron-3-ultra` and `nemotron-3.5`) with the default.
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
const ULTRA = await tokenizerDoubleDir("nemotron-3-ultra");
const V35 = await tokenizerDoubleDir("nemotron-3.5");
globalThis.addEventListener("unload", () => {
  for (const dir of [DIR, ULTRA, V35]) Deno.removeSync(dir, { recursive: true });
});

const generator = { typedArguments: true, markup: XML_MARKUP };

const VARIANTS = [
  { name: "nemotron-3", dir: DIR, glue: "nano", truncate: true, count: 80 },
  { name: "nemotron-3", dir: DIR, glue: "nano", truncate: false, count: 60 },
  { name: "nemotron-3-ultra", dir: ULTRA, glue: "ultra", truncate: true, count: 40 },
  { name: "nemotron-3.5", dir: V35, glue: "ultra", truncate: true, count: 40 },
] as const;

for (const [i, { name, dir, glue, truncate, count }] of VARIANTS.entries()) {
  const asRenderers = new NemotronTextRenderer({
    enableThinking: true,
    truncateHistoryThinking: truncate,
    glue,
    asciiDeclarations: true,
  });
  registerFamilyChecks({
    label: name + (truncate ? "" : " truncate_history_thinking=false"),
    model: { dir, family: name, templateKwargs: { truncate_history_thinking: truncate } },
    reference: {
      renderer: name,
      config: { enable_thinking: true, truncate_history_thinking: truncate },
      deviation: {
        what: "renderers writes tool-declaration JSON with ensure_ascii=True",
        text: (messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean) =>
          asRenderers.render(messages, tools, { addGenerationPrompt: prompt }),
      },
    },
    generator,
    canonical: trimmed,
    count,
    firstSeed: 70001 + 1000 * i,
  });
}
