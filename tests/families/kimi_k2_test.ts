/**
 * Kimi K2 on a tokenizer double (the Qwen3 vocabulary plus Kimi's special tokens,
 * `tests/support/tokenizer_doubles.ts`: no package ships Kimi's tokenizer), checked against
 * `renderers` (`kimi-k2`) over generated conversations with the format's hard cases: JSON string
 * values holding `<|tool_call_end|>` and the section markers, booleans, floats, nested objects,
 * unicode, parallel calls. Call ids are Kimi's own (`functions.NAME:INDEX`), as the policy writes
 * them.
 */
import { tokenizerDoubleDir } from "../support/tokenizer_doubles.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { withoutReasoning } from "./canonical_forms.ts";
import { KIMI_K2_MARKUP } from "./markup.ts";

const DIR = await tokenizerDoubleDir("kimi-k2");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));

registerFamilyChecks({
  label: "kimi-k2",
  model: { dir: DIR, family: "kimi-k2" },
  reference: { renderer: "kimi-k2", config: {} },
  generator: {
    typedArguments: true,
    markup: KIMI_K2_MARKUP,
    toolCallId: (name, n) => `functions.${name}:${n}`,
  },
  canonical: withoutReasoning,
  count: 120,
  firstSeed: 30001,
});
