/**
 * Tencent Hunyuan Hy3 (`tencent/Hy3`, `Hy3-FP8`): a bare system header, `<｜hy_User｜>` /
 * `<｜hy_Assistant｜>` turns closed by `<｜hy_eos｜>`, a think block on every assistant turn, GLM-shaped
 * calls in a `<tool_calls>` section and results in `<tool_responses>`, every marker an added token
 * with the `:opensource` suffix (`render.ts`). Written in code; parsed with the GLM call reader on
 * Hy3's markers (`tool_calls.ts`).
 *
 * Template variables (`HY3_TEMPLATE_OPTIONS`): `reasoning_effort` (`no_think`, the default: the
 * prompt closes the think block; `low`, `high`: the policy reasons up to its own `</think>`) and
 * `preserved_thinking` (default: whether the conversation has tools; off, turns before the last
 * user message lose their reasoning). `is_training`, `raw_last_assistant` and
 * `fallback_strategy` are not supported (training-side or prefill switches).
 *
 * Detection: a template with `hy_Assistant` and `preserved_thinking` (Hy3-preview's older template
 * has `interleaved_thinking` and unsuffixed tokens: not this family).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { hy3 } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * const t = "{{ '<｜hy_Assistant{}｜>'.format(':opensource') }}{% if preserved_thinking %}{% endif %}";
 * assert.ok(hy3.detect(files(t)));
 * assert.ok(!hy3.detect(files("{{ '<｜hy_Assistant｜>' }}{% if interleaved_thinking %}{% endif %}")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { HY3, type Hy3Effort, Hy3TextRenderer } from "./render.ts";
import { splitHy3ToolCalls } from "./tool_calls.ts";

export { HY3, Hy3TextRenderer } from "./render.ts";

const NAME = "hy3";

const HY3_TEMPLATE_OPTIONS: TemplateValueLists = {
  reasoning_effort: ["no_think", "low", "high"],
  preserved_thinking: [true, false],
};

async function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const need = (token: string) => requireToken(ctx, NAME, token);
  for (const token of Object.values(HY3)) need(token);
  const eos = need(HY3.eos);
  const effort = templateValue(
    NAME,
    HY3_TEMPLATE_OPTIONS,
    ctx.templateKwargs,
    "reasoning_effort",
    "no_think",
  ) as Hy3Effort;
  const preserved = ctx.templateKwargs.preserved_thinking === undefined
    ? undefined
    : templateValue(NAME, HY3_TEMPLATE_OPTIONS, ctx.templateKwargs, "preserved_thinking", true);
  const text = new Hy3TextRenderer({ reasoningEffort: effort, preservedThinking: preserved });
  const output = thinkToolCallOutput(
    "hy3",
    {
      thinkStart: need(HY3.think),
      thinkEnd: need(HY3.thinkEnd),
      endOfTurn: [eos],
      promptOpensReasoning: text.thinks,
      trim: "none",
      toolCallStart: { text: HY3.toolCalls, id: need(HY3.toolCalls) },
      toolCallClosesReasoning: text.thinks,
    },
    splitHy3ToolCalls,
    (ids) => ctx.tokenizer.decode(ids),
  );
  const newline = await ctx.tokenizer.encode("\n");
  return {
    family: NAME,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, HY3.eos, [HY3.user, HY3.assistant]),
    ...output,
    endOfTurn: { id: eos, text: HY3.eos },
    stopTokenIds: [eos],
    toolResponseMarkers: newline.length === 1
      ? { open: need(HY3.toolResponse), close: need(HY3.toolResponseEnd), newline: newline[0] }
      : null,
    quirks: {
      argumentRendering: "<arg_key>/<arg_value> values: strings raw, other values JSON",
      // Without tools (the default of `preserved_thinking`) a new user message drops reasoning.
      dropsOldReasoning: preserved !== true,
      promptOpensReasoning: text.thinks,
    },
  };
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

export const hy3: ModelFamily = {
  name: NAME,
  templateOptions: HY3_TEMPLATE_OPTIONS,
  summary: "Tencent Hy3: <think> on every turn, GLM-shaped calls with :opensource tokens",
  detect: (files) => {
    const t = template(files);
    return t.includes("hy_Assistant") && t.includes("preserved_thinking");
  },
  bind,
};
