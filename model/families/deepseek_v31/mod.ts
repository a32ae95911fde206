/**
 * DeepSeek V3.1 (and V3.1-Terminus): `<｜User｜>`/`<｜Assistant｜>` turns after a bare system
 * prompt, hybrid thinking (`</think>` closes the generation prompt by default, `<think>` opens
 * it with `thinking`), tool calls as `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>`
 * inside `<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>`, tool outputs in
 * `<｜tool▁output▁begin｜>…<｜tool▁output▁end｜>`, `<｜end▁of▁sentence｜>` ending every answer.
 * Written in code from the format (`render.ts`): the model's template lists no tools, so the
 * tools go into the system prompt as the model card describes.
 *
 * Detection: a chat template with `<｜tool▁sep｜>` and `</think>` that writes no ```` ```json ````
 * fence (V3 and R1 wrap arguments in one: their calls are `function<｜tool▁sep｜>NAME\n```json`).
 * The vocabulary must hold V3.1's `<think>`/`</think>` (ids 128798/128799, placeholders in V3).
 *
 * Template variables: `thinking` (or `enable_thinking`), default false. Thinking mode is not
 * prefix-stable: the next prompt keeps the sampled reasoning where a re-render drops it and
 * writes `</think>` for the `<think>` the prompt had.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { deepSeekV31, DS } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * assert.ok(deepSeekV31.detect(files(`{{ "${DS.sep}" }}{{ "${DS.thinkEnd}" }}`)));
 * assert.ok(!deepSeekV31.detect(files("<|im_start|>{{ content }}<|im_end|>")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import {
  type ChatFormat,
  type FamilyContext,
  FamilyError,
  type ModelFamily,
  requireToken,
} from "../family.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import type { AssistantMessage } from "../../../canonical/mod.ts";
import { deepSeekOutputFormat } from "./output.ts";
import { DeepSeekV31TextRenderer, DS } from "./render.ts";

export { deepSeekOutputFormat } from "./output.ts";
export { deepSeekToolsText, DS } from "./render.ts";

const NAME = "deepseek-v3.1";

/** Renders in segments cut before user turns and tool outputs; the answer in thinking mode. */
class DeepSeekRenderer extends TokenizedRenderer {
  constructor(readonly ds: DeepSeekV31TextRenderer, ctx: FamilyContext) {
    super(ds, ctx.tokenizer, DS.eos, [DS.user, DS.outputBegin]);
  }

  override answerText(message: AssistantMessage): string {
    return this.ds.answer(message);
  }
}

function thinkingFlag(kwargs: Record<string, unknown>): boolean {
  const value = kwargs.thinking ?? kwargs.enable_thinking ?? false;
  if (typeof value !== "boolean") {
    throw new FamilyError(`${NAME}: template variable thinking must be true or false`);
  }
  return value;
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const thinking = thinkingFlag(ctx.templateKwargs);
  const need = (token: string) => requireToken(ctx, NAME, token);
  for (const t of [DS.bos, DS.user, DS.assistant, DS.callEnd, DS.sep, DS.callsEnd]) need(t);
  const eos = need(DS.eos);
  const think = need(DS.think), thinkEnd = need(DS.thinkEnd);
  const text = new DeepSeekV31TextRenderer(thinking);
  const output = deepSeekOutputFormat(
    {
      thinkStart: thinking ? think : -1,
      thinkEnd: thinking ? thinkEnd : -1,
      callsBegin: need(DS.callsBegin),
      endOfTurn: [eos],
    },
    (ids) => ctx.tokenizer.decode(ids),
  );
  return Promise.resolve({
    family: NAME,
    renderer: new DeepSeekRenderer(text, ctx),
    ...output,
    endOfTurn: { id: eos, text: DS.eos },
    stopTokenIds: [eos],
    toolResponseMarkers: {
      open: need(DS.outputBegin),
      close: need(DS.outputEnd),
      // No newline wraps a DeepSeek tool output.
      newline: -1,
    },
    quirks: {
      argumentRendering: "the arguments JSON string verbatim after <｜tool▁sep｜>",
      dropsOldReasoning: thinking,
      promptOpensReasoning: thinking,
    },
    notes: thinking
      ? [
        `${NAME}: thinking mode; a re-render drops every turn's reasoning, so later prompts ` +
        "keep sampled ids a full render would not (reported by audit)",
      ]
      : [],
  });
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

export const deepSeekV31: ModelFamily = {
  name: NAME,
  // `enable_thinking` is read as another name for `thinking`.
  templateOptions: { thinking: [true, false], enable_thinking: [true, false] },
  summary: "DeepSeek V3.1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json} calls, hybrid <think>",
  detect: (files) => {
    const t = template(files);
    return t.includes(DS.sep) && t.includes(DS.thinkEnd) && !t.includes("```json");
  },
  bind,
};
