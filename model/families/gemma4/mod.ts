/**
 * Gemma 4 (E2B, E4B, 26B-A4B, 31B instruction models), thinking off (the template's default):
 * `<|turn>ROLE\n…<turn|>` turns, tools declared and calls written in Gemma's own value syntax, and
 * a tool loop that goes on inside one model turn: a call ends with the `<|tool_response>` the
 * policy samples, the results follow in the same turn, and the policy answers on
 * (`render.ts`, `output.ts`). The 26B/31B revision opens every model turn with an empty thought
 * channel; told from the template. Images in user turns and tool results are its soft tokens,
 * counted by the image processor's rule (`gemma_image_tokens.ts`) with the model directory's
 * `processor_config.json`, or Gemma 4's published one.
 *
 * Detection: a template with `<|turn>` and `<|tool_call>`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { gemma4 } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * assert.ok(gemma4.detect(files("{{ '<|turn>model\\n' }}{{ '<|tool_call>call:' }}")));
 * assert.ok(!gemma4.detect(files("<start_of_turn>model\n"))); // Gemma 3
 * ```
 *
 * @module
 */
import type { Message, ToolSpec } from "../../../canonical/mod.ts";
import type { ModelFiles } from "../../model_files.ts";
import {
  type ChatFormat,
  type DeltaHistory,
  type FamilyContext,
  type ModelFamily,
  namedToolResults,
  type Rendered,
  type RenderOptions,
  requireToken,
  type VisionPlaceholder,
} from "../family.ts";
import { toTemplateMessages } from "../../template_input.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { gemmaOutputFormat } from "./output.ts";
import { GEMMA, GEMMA4_VISION, Gemma4TextRenderer } from "./render.ts";
import {
  GEMMA4_IMAGE_PROCESSOR,
  gemmaImageProcessor,
  gemmaImageTokens,
} from "../gemma_image_tokens.ts";

export { GEMMA } from "./render.ts";

const NAME = "gemma4";

/**
 * Gemma's delta: results continue the model turn (the first after the sampled
 * `<|tool_response>`), named by the call they answer (looked up in the history); a user turn
 * follows the sampled `<turn|>` after its newline.
 */
class Gemma4Renderer extends TokenizedRenderer {
  constructor(readonly gemma: Gemma4TextRenderer, ctx: FamilyContext, vision: VisionPlaceholder) {
    const id = (token: string) => requireToken(ctx, NAME, token);
    super(gemma, ctx.tokenizer, GEMMA.turnEnd, [GEMMA.turn, GEMMA.toolResponse], {
      placeholder: vision,
      ids: { start: id(vision.start), pad: id(vision.pad), end: id(vision.end) },
    });
  }

  override renderDelta(
    newMessages: readonly Message[],
    tools: readonly ToolSpec[] = [],
    options: RenderOptions = {},
    history?: DeltaHistory,
  ): Promise<Rendered> {
    const named = namedToolResults(newMessages, history, "unknown");
    return super.renderDelta(named, tools, options);
  }

  override deltaText(newMessages: readonly Message[]): string {
    const msgs = toTemplateMessages(newMessages, false);
    const parts: string[] = [];
    let i = 0;
    for (; msgs[i]?.role === "tool"; i++) {
      if (i > 0) parts.push(GEMMA.toolResponse);
      parts.push(this.gemma.result(msgs[i].name ?? "unknown", msgs[i]));
    }
    if (i === msgs.length) return parts.join("");
    parts.push(i > 0 ? `${GEMMA.turnEnd}\n` : "\n");
    for (const m of msgs.slice(i)) {
      parts.push(`${GEMMA.turn}${m.role}\n`, this.gemma.userContent(m), `${GEMMA.turnEnd}\n`);
    }
    parts.push(this.gemma.opening);
    return parts.join("");
  }
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const need = (token: string) => requireToken(ctx, NAME, token);
  for (const token of Object.values(GEMMA)) need(token);
  const turnEnd = need(GEMMA.turnEnd), toolResponse = need(GEMMA.toolResponse);
  const toolCallEnd = need(GEMMA.toolCallEnd);
  const stops = [turnEnd, toolResponse, need(GEMMA.eos)];
  const processor = gemmaImageProcessor(ctx.files.imageProcessor, GEMMA4_IMAGE_PROCESSOR);
  const vision = { ...GEMMA4_VISION, tokens: gemmaImageTokens(processor) };
  const text = new Gemma4TextRenderer({
    emptyThought: template(ctx.files).includes("<|channel>thought\\n<channel|>"),
    vision,
  });
  return Promise.resolve({
    family: NAME,
    renderer: new Gemma4Renderer(text, ctx, vision),
    ...gemmaOutputFormat(
      { channel: need(GEMMA.channel), channelEnd: need(GEMMA.channelEnd), stops },
      (ids) => ctx.tokenizer.decode(ids),
    ),
    endOfTurn: { id: turnEnd, text: GEMMA.turnEnd },
    // A call's turn ends with the `<|tool_response>` the results follow; an answer's with `<turn|>`.
    sampledTurnEnds: {
      ids: [turnEnd, toolResponse],
      endFor: (output) => Promise.resolve(output.includes(toolCallEnd) ? toolResponse : turnEnd),
      historyRewrites: new Map(),
    },
    stopTokenIds: stops,
    toolResponseMarkers: null,
    vision,
    notes: [
      `images: ${processor.patchSize}-pixel patches pooled ${processor.poolingKernelSize}×` +
      `${processor.poolingKernelSize}, at most ${processor.maxSoftTokens} soft tokens (` +
      (ctx.files.imageProcessor
        ? "the model directory's image processor settings)"
        : "Gemma 4's published processor_config.json; the directory has none)"),
    ],
    quirks: {
      argumentRendering: "Gemma's syntax: unquoted keys sorted, strings between <|\"|>",
      dropsOldReasoning: true,
      promptOpensReasoning: false,
      rewritesAnswers: [
        "the text of an answer with calls is written after their results",
        "arguments are written with their keys sorted",
      ],
    },
  });
}

export const gemma4: ModelFamily = {
  name: NAME,
  templateOptions: {},
  summary: "Gemma 4: tool loop inside one model turn, Gemma's own call syntax (thinking off)",
  detect: (files) => {
    const t = template(files);
    return t.includes("<|turn>") && t.includes("<|tool_call>");
  },
  bind,
};
