/**
 * Qwen3.5 and Qwen3.6 (XML tool calls) on the Qwen3 vocabulary (the same added tokens), checked
 * against `renderers` (`qwen3.5`, `qwen3.6`) over generated conversations with the format's hard
 * cases: values holding `</parameter>`, `</function>`, `<tool_call>`, booleans, floats, nested
 * objects, edge whitespace.
 */
import { registerFamilyChecks } from "./family_check.ts";
import { trimmed } from "./canonical_forms.ts";
import { XML_MARKUP } from "./markup.ts";

const generator = { typedArguments: true, markup: XML_MARKUP };

registerFamilyChecks({
  label: "qwen3.5",
  model: { family: "qwen3.5" },
  reference: { renderer: "qwen3.5", config: { enable_thinking: true } },
  generator,
  canonical: trimmed,
  count: 120,
  firstSeed: 1,
});

registerFamilyChecks({
  label: "qwen3.6",
  model: { family: "qwen3.6" },
  reference: { renderer: "qwen3.6", config: { enable_thinking: true } },
  generator,
  canonical: trimmed,
  count: 120,
  firstSeed: 5001,
});

registerFamilyChecks({
  label: "qwen3.6 preserve_thinking",
  model: { family: "qwen3.6", templateKwargs: { preserve_thinking: true } },
  reference: { renderer: "qwen3.6", config: { enable_thinking: true, preserve_thinking: true } },
  generator,
  canonical: trimmed,
  count: 60,
  firstSeed: 9001,
});
