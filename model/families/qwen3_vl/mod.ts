/**
 * Qwen3-VL (Instruct: 4B, 8B, 30B-A3B): ChatML on Qwen3's vocabulary with hermes JSON tool calls
 * and no reasoning, written in code (`render.ts`), read by the hermes parser. An image in user or
 * tool content becomes `<|vision_start|>` + its `<|image_pad|>` tokens + `<|vision_end|>`, counted
 * by the image processor's rule (`qwen_image_tokens.ts`) with the model directory's
 * `preprocessor_config.json`, or Qwen3-VL's published one.
 *
 * Detection: a template with hermes `<tool_call>`, `<|vision_start|>` and no `<think>` (Qwen3's
 * has `<think>`, and the vocabulary holds `<think>` either way).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { qwen3Vl } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * const vl = "{{ '<|vision_start|><|image_pad|><|vision_end|>' }}{{ '<tool_call>\\n' }}";
 * assert.ok(qwen3Vl.detect(files(vl)));
 * assert.ok(!qwen3Vl.detect(files(vl + "<think>"))); // a thinking template
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import type { ChatFormat, FamilyContext, ModelFamily } from "../family.ts";
import { turnIds } from "../chatml_ids.ts";
import { hasXmlToolCalls } from "../qwen35/mod.ts";
import { hermesOutputFormat } from "../qwen3/mod.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { requireToken } from "../family.ts";
import { QWEN3_VL_VISION, Qwen3VlTextRenderer } from "./render.ts";
import {
  QWEN3_VL_IMAGE_PROCESSOR,
  qwenImageProcessor,
  qwenImageTokens,
} from "../qwen_image_tokens.ts";

export { Qwen3VlTextRenderer } from "./render.ts";

const NAME = "qwen3-vl";

async function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const ids = await turnIds(ctx, NAME, "<|im_end|>");
  for (const t of ["<|im_start|>", "<tool_call>", "</tool_call>"]) requireToken(ctx, NAME, t);
  const processor = qwenImageProcessor(ctx.files.imageProcessor, QWEN3_VL_IMAGE_PROCESSOR);
  const vision = { ...QWEN3_VL_VISION, tokens: qwenImageTokens(processor) };
  const visionIds = {
    start: requireToken(ctx, NAME, vision.start),
    pad: requireToken(ctx, NAME, vision.pad),
    end: requireToken(ctx, NAME, vision.end),
  };
  const output = hermesOutputFormat({
    idOf: ctx.idOf,
    decode: (ids) => ctx.tokenizer.decode(ids),
    endOfTurn: ids.stopTokenIds,
    promptOpensReasoning: false,
    thinkTags: false,
  });
  return {
    family: NAME,
    renderer: new TokenizedRenderer(
      new Qwen3VlTextRenderer({ vision }),
      ctx.tokenizer,
      "<|im_end|>",
      "<|im_start|>",
      { placeholder: vision, ids: visionIds },
    ),
    ...output,
    ...ids,
    vision,
    notes: [
      `images: ${processor.patchSize}-pixel patches merged ${processor.mergeSize}×` +
      `${processor.mergeSize}, resized to ${processor.minPixels}–${processor.maxPixels} pixels (` +
      (ctx.files.imageProcessor
        ? "the model directory's image processor settings)"
        : "Qwen3-VL's published preprocessor_config.json; the directory has none)"),
    ],
    quirks: {
      argumentRendering: "hermes JSON: the arguments string verbatim inside " +
        '{"name": …, "arguments": …}',
      dropsOldReasoning: false,
      promptOpensReasoning: false,
    },
  };
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

export const qwen3Vl: ModelFamily = {
  name: NAME,
  templateOptions: {},
  summary: "Qwen3-VL Instruct: hermes JSON tool calls, no reasoning, images in user and tool turns",
  detect: (files) => {
    const t = template(files);
    return t.includes("<|vision_start|>") && t.includes("<tool_call>") && !t.includes("<think>") &&
      !hasXmlToolCalls(t);
  },
  bind,
};
