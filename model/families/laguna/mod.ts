/**
 * Poolside's Laguna coding models (`laguna`), in two layouts read from the chat template:
 *
 * - 2.1 (Laguna-XS-2.1, Laguna-S-2.1, `render.ts`): tags hug their text (`<user>…</user>\n`),
 *   text verbatim, `<think>R</think>` in every turn while thinking is on.
 * - XS.2 / M.1 (`render_xs2.ts`): a newline inside every tag (`<user>\n…\n</user>\n`), text
 *   trimmed, `<think>\nR\n</think>` for every turn with reasoning; M.1 has no default system
 *   message (its template does not name Poolside's).
 *
 * In both: `〈|EOS|〉` first, `<assistant>…</assistant>` answers (the policy stops on
 * `</assistant>`, history writes `</assistant>\n`), GLM-shaped calls
 * `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>` whose argument tags
 * are text. Written in code from the format; detected from the template's markers (`〈|EOS|〉` and
 * `<assistant>`).
 *
 * Template variables (`--template-kwargs`): `enable_thinking` (default: on for S-2.1, whose
 * template reads `preserve_thinking`, off for the others), `preserve_thinking` (S-2.1, default
 * false: turns keep their reasoning while thinking is off).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { laguna } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * assert.ok(laguna.detect(files("〈|EOS|〉{% for m in messages %}<assistant>{% endfor %}")));
 * assert.ok(!laguna.detect(files("<|im_start|>assistant")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { splitGlmToolCalls } from "../glm/mod.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { LagunaTextRenderer } from "./render.ts";
import { LagunaXs2TextRenderer } from "./render_xs2.ts";

/** The template variables Laguna reads (`preserve_thinking`: S-2.1 only). */
const LAGUNA_TEMPLATE_OPTIONS: TemplateValueLists = {
  enable_thinking: [true, false],
  preserve_thinking: [true, false],
};

/** Laguna's template layouts. */
type LagunaLayout = "xs-2.1" | "s-2.1" | "xs.2" | "m.1";

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

/** The layout of a Laguna chat template, or null for another family's. */
export function lagunaLayout(t: string): LagunaLayout | null {
  if (!t.includes("〈|EOS|〉") || !t.includes("<assistant>")) return null;
  if (/<user>(\\n|\n)/.test(t)) return t.includes("made by Poolside") ? "xs.2" : "m.1";
  return t.includes("preserve_thinking") ? "s-2.1" : "xs-2.1";
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const name = "laguna";
  const need = (token: string) => requireToken(ctx, name, token);
  need("<assistant>");
  const end = need("</assistant>"), eos = need("〈|EOS|〉");
  // A directory forced to this family without a Laguna template gets the 2.1 layout.
  const layout = lagunaLayout(template(ctx.files)) ?? "xs-2.1";
  const wide = layout === "xs.2" || layout === "m.1";
  const value = (key: string, fallback: boolean) =>
    templateValue(name, LAGUNA_TEMPLATE_OPTIONS, ctx.templateKwargs, key, fallback);
  const enableThinking = value("enable_thinking", layout === "s-2.1");
  const preserveThinking = value("preserve_thinking", false);
  const text = wide
    ? new LagunaXs2TextRenderer({ enableThinking, defaultSystem: layout === "xs.2" })
    : new LagunaTextRenderer({ enableThinking, preserveThinking });
  return Promise.resolve({
    family: name,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, "</assistant>", "<assistant>"),
    ...thinkToolCallOutput(
      "glm45",
      {
        thinkStart: enableThinking ? need("<think>") : -1,
        thinkEnd: enableThinking ? need("</think>") : -1,
        endOfTurn: [end, eos],
        promptOpensReasoning: enableThinking,
        // XS.2 / M.1 strip what they render; 2.1 renders the sampled text verbatim.
        trim: wide ? "whitespace" : "none",
        toolCallStart: { text: "<tool_call>", id: need("<tool_call>") },
        toolCallClosesReasoning: true,
      },
      (body, tools, newId) => splitGlmToolCalls(body, tools, newId, !wide),
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
      ...(!wide && preserveThinking && !enableThinking
        ? { rewritesAnswers: ["a turn prompted with </think> is written <think>…</think>"] }
        : {}),
    },
    notes: [
      `laguna (${layout} layout): thinking ${enableThinking ? "on" : "off"}; the policy stops on ` +
      "</assistant> and history writes </assistant> + newline",
    ],
  });
}

export const laguna: ModelFamily = {
  name: "laguna",
  templateOptions: LAGUNA_TEMPLATE_OPTIONS,
  summary: "Poolside Laguna: <user>/<assistant> tags, <think>, <tool_call> arg_key/arg_value",
  detect: (files) => lagunaLayout(template(files)) !== null,
  bind,
};
