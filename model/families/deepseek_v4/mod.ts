/**
 * DeepSeek V4: a bare system prompt after `<｜begin▁of▁sentence｜>`, user turns that also carry
 * tool results (no tool role), `<｜Assistant｜>` opening `<think>` (thinking mode) or closing it
 * (`</think>`, chat mode, the default), DSML tool calls (`dsml_calls.ts`) with typed parameters,
 * `<｜end▁of▁sentence｜>` ending every answer. Written in code from the format (`render.ts`): the
 * model ships a Python encoder, no chat template.
 *
 * Detection: the vocabulary's `｜DSML｜` added token (the real `tokenizer.json` has it; there is no
 * template to read).
 *
 * Template variables (`--template-kwargs`, declared in `DEEPSEEK_V4_TEMPLATE_OPTIONS`): `enable_thinking`
 * (default false), `reasoning_effort` (`low` (default), `high`, `max`: the prompt after the begin
 * token, thinking mode only), `drop_thinking` (default true: without tools, earlier turns lose
 * their reasoning after a new user turn; with tools every turn keeps it).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { deepSeekV4 } from "./mod.ts";
 * import { DS4 } from "./render.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * // Detected by its DSML token (its chat template is not needed).
 * assert.ok(deepSeekV4.detect(files("", [DS4.dsml])));
 * assert.ok(!deepSeekV4.detect(files("{{ messages }}", ["<think>"])));
 * ```
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import type { ModelFiles } from "../../model_files.ts";
import {
  type ChatFormat,
  type DeltaHistory,
  type FamilyContext,
  type ModelFamily,
  type Rendered,
  type RenderOptions,
  requireToken,
} from "../family.ts";
import { resultsInCallOrder } from "../results_in_call_order.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { DSML_SECTION, splitDsmlToolCalls } from "./dsml_calls.ts";
import { DeepSeekV4TextRenderer, DS4, type ReasoningEffort } from "./render.ts";

const NAME = "deepseek-v4";

/** The template variables DeepSeek V4 reads (defaults: false, `low`, true). */
const DEEPSEEK_V4_TEMPLATE_OPTIONS: TemplateValueLists = {
  enable_thinking: [true, false],
  reasoning_effort: ["low", "high", "max"],
  drop_thinking: [true, false],
};

/** Renders in segments cut before user turns; answers as the policy writes them. */
class DeepSeekV4Renderer extends TokenizedRenderer {
  constructor(readonly ds: DeepSeekV4TextRenderer, ctx: FamilyContext) {
    super(ds, ctx.tokenizer, DS4.eos, DS4.user);
  }

  override answerText(message: AssistantMessage): string {
    return this.ds.answer(message);
  }

  /** Parallel results in their calls' order, as a full render writes them. */
  override renderDelta(
    newMessages: readonly Message[],
    tools: readonly ToolSpec[] = [],
    options: RenderOptions = {},
    history?: DeltaHistory,
  ): Promise<Rendered> {
    return super.renderDelta(resultsInCallOrder(newMessages, history, "stable"), tools, options);
  }
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const value = <T extends boolean | string>(key: string, fallback: T) =>
    templateValue(NAME, DEEPSEEK_V4_TEMPLATE_OPTIONS, ctx.templateKwargs, key, fallback);
  const thinking = value("enable_thinking", false);
  const dropThinking = value("drop_thinking", true);
  const effort = value("reasoning_effort", "low") as ReasoningEffort;
  const need = (token: string) => requireToken(ctx, NAME, token);
  for (const t of [DS4.bos, DS4.user, DS4.assistant, DS4.dsml]) need(t);
  const eos = need(DS4.eos);
  const text = new DeepSeekV4TextRenderer({ thinking, dropThinking, effort });
  const output = thinkToolCallOutput(
    "deepseek_v4",
    {
      thinkStart: thinking ? need(DS4.think) : -1,
      thinkEnd: thinking ? need(DS4.thinkEnd) : -1,
      endOfTurn: [eos],
      promptOpensReasoning: thinking,
      trim: "none",
      toolCallStart: { text: DSML_SECTION },
    },
    (body, _tools, newToolCallId) => splitDsmlToolCalls(body, newToolCallId),
    (ids) => ctx.tokenizer.decode(ids),
  );
  return Promise.resolve({
    family: NAME,
    renderer: new DeepSeekV4Renderer(text, ctx),
    ...output,
    endOfTurn: { id: eos, text: DS4.eos },
    stopTokenIds: [eos],
    // Tool results are plain text inside the user turn (`<tool_result>` is no added token).
    toolResponseMarkers: null,
    quirks: {
      argumentRendering: 'DSML <｜DSML｜parameter string="true|false">: strings raw, ' +
        "other values JSON (Python spelling)",
      dropsOldReasoning: thinking && dropThinking,
      promptOpensReasoning: thinking,
    },
    notes: thinking && dropThinking
      ? [
        `${NAME}: thinking mode with drop_thinking; in a conversation without tools a re-render ` +
        "drops earlier turns' reasoning after a new user turn (reported by audit)",
      ]
      : [],
  });
}

function hasDsmlToken(files: ModelFiles): boolean {
  return Object.values(files.config.added_tokens_decoder ?? {}).some((t) => t.content === DS4.dsml);
}

export const deepSeekV4: ModelFamily = {
  name: NAME,
  templateOptions: DEEPSEEK_V4_TEMPLATE_OPTIONS,
  summary: "DeepSeek V4: DSML tool calls with typed parameters, tool results in the user turn",
  detect: hasDsmlToken,
  bind,
};
