/**
 * Qwen3.5 and Qwen3.6: ChatML with `<think>` reasoning opened by the generation prompt and XML
 * tool calls (`<tool_call><function=NAME><parameter=KEY>…`). The prompt is written in code from
 * the format (`render.ts`), not through the model's Jinja template, so a model directory needs
 * only its tokenizer files. Qwen3.6 differs in two places: non-string argument values are JSON
 * (`true`, `null`) where Qwen3.5 writes Python's `True`, `None`; and `preserve_thinking` keeps
 * every turn's reasoning.
 *
 * Template variables (`--template-kwargs` / `templateKwargs`): `enable_thinking` (default true),
 * `preserve_thinking` (Qwen3.6, default false).
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { turnIds } from "../chatml_ids.ts";
import { Qwen35TextRenderer } from "./render.ts";
import { xmlOutputFormat } from "./xml_output.ts";

export { type Qwen35Options, Qwen35TextRenderer } from "./render.ts";
export { xmlOutputFormat, type XmlOutputIds } from "./xml_output.ts";
export { splitXmlToolCalls } from "./xml_tool_calls.ts";

/** A template in the XML tool-call format (`<function=…>`, `<parameter=…>`). */
export function hasXmlToolCalls(template: string): boolean {
  return template.includes("<function=") && template.includes("<parameter=");
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

async function bind(ctx: FamilyContext, name: "qwen3.5" | "qwen3.6"): Promise<ChatFormat> {
  const enableThinking = ctx.templateKwargs.enable_thinking !== false;
  const preserveThinking = name === "qwen3.6" && ctx.templateKwargs.preserve_thinking === true;
  const text = new Qwen35TextRenderer({
    argumentValues: name === "qwen3.6" ? "json" : "python",
    enableThinking,
    preserveThinking,
  });
  const ids = await turnIds(ctx, name, "<|im_end|>");
  requireToken(ctx, name, "<|im_start|>");
  const output = xmlOutputFormat(
    {
      thinkStart: requireToken(ctx, name, "<think>"),
      thinkEnd: requireToken(ctx, name, "</think>"),
      toolCall: requireToken(ctx, name, "<tool_call>"),
      endOfTurn: ids.stopTokenIds,
    },
    enableThinking,
    (ids) => ctx.tokenizer.decode(ids),
  );
  return {
    family: name,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, "<|im_end|>", "<|im_start|>"),
    ...output,
    ...ids,
    quirks: {
      argumentRendering: name === "qwen3.6"
        ? "XML <parameter> values: strings raw, other values JSON (true, null, 1.0)"
        : "XML <parameter> values: strings raw, containers JSON, scalars Python str() " +
          "(True, None, 1.0)",
      dropsOldReasoning: !preserveThinking,
      promptOpensReasoning: enableThinking,
    },
  };
}

export const qwen35: ModelFamily = {
  name: "qwen3.5",
  summary: "Qwen3.5: <think> reasoning, XML tool calls, Python str() scalar arguments",
  detect: (files) => {
    const t = template(files);
    return hasXmlToolCalls(t) && t.includes("<think>") && !t.includes("preserve_thinking");
  },
  bind: (ctx) => bind(ctx, "qwen3.5"),
};

export const qwen36: ModelFamily = {
  name: "qwen3.6",
  summary: "Qwen3.6: Qwen3.5 with JSON scalar arguments and preserve_thinking",
  detect: (files) => {
    const t = template(files);
    return hasXmlToolCalls(t) && t.includes("<think>") && t.includes("preserve_thinking");
  },
  bind: (ctx) => bind(ctx, "qwen3.6"),
};
