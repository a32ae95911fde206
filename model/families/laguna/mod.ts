/**
 * Poolside's Laguna 2.1 coding models (`laguna`: Laguna-XS-2.1, Laguna-S-2.1): tag-hugging
 * `<user>…</user>` turns, `<assistant>…</assistant>` answers (the policy stops on `</assistant>`
 * and history writes `</assistant>\n`), `<think>` reasoning kept in every turn, GLM-shaped calls
 * `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>` with text argument
 * tags. Written in code from the format (`render.ts`); detected from the chat template's markers
 * (`〈|EOS|〉` and `<assistant>`, tags without inner newlines; the older XS.2 / M.1 layout, with a
 * newline inside every tag, is not this family).
 *
 * Template variables (`--template-kwargs`): `enable_thinking` (default: false for XS-2.1, true
 * for S-2.1, whose template reads `preserve_thinking`), `preserve_thinking` (S-2.1, default
 * false).
 *
 * @module
 */
import type { AssistantMessage } from "../../../canonical/mod.ts";
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { splitGlmToolCalls } from "../glm/mod.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { LagunaTextRenderer } from "./render.ts";

export { LAGUNA_DEFAULT_SYSTEM, LagunaTextRenderer } from "./render.ts";

/** The template variables the family reads and the values each takes. */
export const LAGUNA_TEMPLATE_OPTIONS = {
  enable_thinking: [true, false],
  preserve_thinking: [true, false],
} as const;

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

/** A Laguna 2.1 chat template (not XS.2 / M.1, which put a newline inside every tag). */
export function isLagunaTemplate(t: string): boolean {
  return t.includes("〈|EOS|〉") && t.includes("<assistant>") &&
    !/<user>(\\n|\n)/.test(t);
}

/** `TokenizedRenderer` whose answer is written by the family (the prompt opened `<think>`). */
class LagunaRenderer extends TokenizedRenderer {
  constructor(readonly laguna: LagunaTextRenderer, ctx: FamilyContext) {
    super(laguna, ctx.tokenizer, "</assistant>", "<assistant>");
  }

  override answerText(message: AssistantMessage): string {
    return this.laguna.answer(message);
  }
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const name = "laguna";
  const need = (token: string) => requireToken(ctx, name, token);
  need("<assistant>");
  const end = need("</assistant>"), eos = need("〈|EOS|〉");
  // S-2.1's template reads `preserve_thinking` and thinks by default; XS-2.1's does not.
  const s21 = template(ctx.files).includes("preserve_thinking");
  const enableThinking = typeof ctx.templateKwargs.enable_thinking === "boolean"
    ? ctx.templateKwargs.enable_thinking
    : s21;
  const preserveThinking = ctx.templateKwargs.preserve_thinking === true;
  const text = new LagunaTextRenderer({ enableThinking, preserveThinking });
  return Promise.resolve({
    family: name,
    renderer: new LagunaRenderer(text, ctx),
    ...thinkToolCallOutput(
      "glm45",
      {
        thinkStart: enableThinking ? need("<think>") : -1,
        thinkEnd: enableThinking ? need("</think>") : -1,
        endOfTurn: [end, eos],
        promptOpensReasoning: enableThinking,
        trim: "none",
        toolCallStart: { text: "<tool_call>", id: need("<tool_call>") },
        toolCallClosesReasoning: true,
      },
      (body, tools, newId) => splitGlmToolCalls(body, tools, newId, true),
      (ids) => ctx.tokenizer.decode(ids),
    ),
    endOfTurn: { id: end, text: "</assistant>" },
    stopTokenIds: [end, eos],
    // `<tool_response>` is text in Laguna's vocabulary: no marker tokens around tool outputs.
    toolResponseMarkers: null,
    quirks: {
      argumentRendering: "<arg_key>/<arg_value> text pairs: strings raw, other values JSON",
      dropsOldReasoning: false,
      promptOpensReasoning: enableThinking,
      // S-2.1 with thinking off and preserve_thinking on: history shows `<think>R</think>` where
      // the prompt had opened with `</think>`.
      ...(preserveThinking && !enableThinking
        ? { rewritesAnswers: ["a turn prompted with </think> is written <think>…</think>"] }
        : {}),
    },
    notes: [
      `laguna (${s21 ? "S-2.1" : "XS-2.1"} template): thinking ${
        enableThinking ? "on" : "off"
      }; the policy stops on </assistant> and history writes </assistant> + newline`,
    ],
  });
}

export const laguna: ModelFamily = {
  name: "laguna",
  summary: "Poolside Laguna 2.1: <user>/<assistant> tags, <think>, <tool_call> arg_key/arg_value",
  detect: (files) => isLagunaTemplate(template(files)),
  bind,
};
