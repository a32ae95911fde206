/**
 * MiniMax M2 (`minimax-m2`: M2, M2.5, M2.7): `]~b]ROLE` turns closed by `[e~[` (the assistant's
 * role written `ai`), `<think>` reasoning opened by the generation prompt and kept only after the
 * last user message, `<minimax:tool_call><invoke name=…><parameter name=…>` calls, tool results
 * as `<response>` text. Written in code from the format (`render.ts`); detected from the chat
 * template's markers (`]~b]` and `<minimax:tool_call>`).
 *
 * The policy stops on `[e~[`; history writes `[e~[\n`, so the newline starts the next prompt's
 * delta (an output cut off without `[e~[` gets it bridged, untrained). The system identity used
 * when a conversation has none differs between versions: it is read from the model's own
 * template (`set model_identity = "…"`), and `--template-kwargs '{"model_identity": "…"}'`
 * overrides it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { miniMaxM2 } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * assert.ok(miniMaxM2.detect(files("]~b]ai\n{{ content }}<minimax:tool_call>")));
 * assert.ok(!miniMaxM2.detect(files("<|im_start|>assistant")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { MINIMAX_M25_IDENTITY, MiniMaxM2TextRenderer } from "./render.ts";
import { BLOCK_OPEN, splitMiniMaxToolCalls } from "./tool_calls.ts";

export { MiniMaxM2TextRenderer } from "./render.ts";

/** The template variable MiniMax M2 reads: the default system identity, any text. */
const MINIMAX_M2_TEMPLATE_OPTIONS: TemplateValueLists = { model_identity: "text" };

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

/** A MiniMax M2 chat template. */
function isMiniMaxM2Template(t: string): boolean {
  return t.includes("]~b]") && t.includes("<minimax:tool_call>");
}

/** The default identity a template sets (`set model_identity = "…"`), or null. */
export function templateIdentity(t: string): string | null {
  const m = /set\s+model_identity\s*=\s*(?:"([^"]*)"|'([^']*)')/.exec(t);
  return m ? m[1] ?? m[2] : null;
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const name = "minimax-m2";
  const need = (token: string) => requireToken(ctx, name, token);
  need("]~!b[");
  need("]~b]");
  need("</minimax:tool_call>");
  const end = need("[e~[");
  const identity = templateValue(
    name,
    MINIMAX_M2_TEMPLATE_OPTIONS,
    ctx.templateKwargs,
    "model_identity",
    templateIdentity(template(ctx.files)) ?? MINIMAX_M25_IDENTITY,
  );
  const text = new MiniMaxM2TextRenderer(identity);
  return Promise.resolve({
    family: name,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, "[e~[", "]~b]"),
    ...thinkToolCallOutput(
      "minimax_m2",
      {
        thinkStart: need("<think>"),
        thinkEnd: need("</think>"),
        endOfTurn: [end],
        promptOpensReasoning: true,
        trim: "newlines",
        toolCallStart: { text: BLOCK_OPEN, id: need(BLOCK_OPEN) },
        toolCallClosesReasoning: true,
      },
      splitMiniMaxToolCalls,
      (ids) => ctx.tokenizer.decode(ids),
    ),
    endOfTurn: { id: end, text: "[e~[" },
    stopTokenIds: [end],
    // Tool outputs sit in `<response>` text, not between marker tokens of their own.
    toolResponseMarkers: null,
    quirks: {
      argumentRendering: "<invoke>/<parameter> XML: strings raw, other values JSON",
      dropsOldReasoning: true,
      promptOpensReasoning: true,
    },
    notes: [
      `minimax-m2: default system identity ${JSON.stringify(identity)}; the policy stops on ` +
      "[e~[ and history writes [e~[ + newline (the newline starts the next delta)",
    ],
  });
}

export const miniMaxM2: ModelFamily = {
  name: "minimax-m2",
  templateOptions: MINIMAX_M2_TEMPLATE_OPTIONS,
  summary: "MiniMax M2/M2.5/M2.7: ]~b] turns, <minimax:tool_call> invoke/parameter calls",
  detect: (files) => isMiniMaxM2Template(template(files)),
  bind,
};
