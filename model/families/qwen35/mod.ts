/**
 * Qwen3.5, Qwen3.6 and Qwen3.8: ChatML with `<think>` reasoning opened by the generation prompt
 * and XML tool calls (`<tool_call><function=NAME><parameter=KEY>…`). The prompt is written in code
 * from the format (`render.ts`), not through the model's Jinja template, so a model directory
 * needs only its tokenizer files. Qwen3.6 differs in two places: non-string argument values are JSON
 * (`true`, `null`) where Qwen3.5 writes Python's `True`, `None`; and `preserve_thinking` keeps
 * every turn's reasoning. Qwen3.8 is Qwen3.6 with `preserve_thinking` on by default and its
 * `reasoning_effort` instruction written into the system turn (see `render.ts`).
 *
 * Template variables (`--template-kwargs`, declared in `QWEN_XML_TEMPLATE_OPTIONS`):
 * `enable_thinking` (default true), `preserve_thinking` (Qwen3.6: default false; Qwen3.8: true),
 * `reasoning_effort` (Qwen3.8: `xhigh` (default), `medium`, `low`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { qwen35, qwen36 } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * const xml = "<think>{% if tools %}<function=name><parameter=x>{% endif %}";
 * assert.ok(qwen35.detect(files(xml)) && !qwen36.detect(files(xml)));
 * assert.ok(qwen36.detect(files(xml + "{% if preserve_thinking %}{% endif %}")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import type { ChatFormat, FamilyContext, ModelFamily } from "../family.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { Qwen35TextRenderer } from "./render.ts";
import { chatmlXmlOutput } from "./xml_output.ts";

export { chatmlXmlOutput, xmlOutputFormat } from "./xml_output.ts";
export { XML_CALL_INSTRUCTIONS, xmlToolCall } from "./render.ts";

/** A template in the XML tool-call format (`<function=…>`, `<parameter=…>`). */
export function hasXmlToolCalls(template: string): boolean {
  return template.includes("<function=") && template.includes("<parameter=");
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

type QwenXmlName = "qwen3.5" | "qwen3.6" | "qwen3.8";

const THINKING = [true, false];

/** The template variables each reads (`preserve_thinking`: default on only in Qwen3.8). */
const QWEN_XML_TEMPLATE_OPTIONS: Record<QwenXmlName, TemplateValueLists> = {
  "qwen3.5": { enable_thinking: THINKING },
  "qwen3.6": { enable_thinking: THINKING, preserve_thinking: [true, false] },
  "qwen3.8": {
    enable_thinking: THINKING,
    preserve_thinking: [true, false],
    reasoning_effort: ["xhigh", "medium", "low"],
  },
};

// Qwen3.8's system-turn instruction per `reasoning_effort` (thinking on; `medium` writes none):
// the model was trained on exactly this text.
const EFFORT_INSTRUCTIONS: Record<string, string> = {
  xhigh: "Reasoning effort is set to xhigh. Please think carefully through the task, validate " +
    "key assumptions, consider plausible alternatives, and prioritize correctness, consistency, " +
    "and clarity in the final answer.",
  medium: "",
  low: "Reasoning effort is set to low. Keep your thinking brief and focused, moving directly " +
    "to the conclusion without unnecessary elaboration.",
};

async function bind(ctx: FamilyContext, name: QwenXmlName): Promise<ChatFormat> {
  const value = <T extends boolean | string>(key: string, fallback: T) =>
    templateValue(name, QWEN_XML_TEMPLATE_OPTIONS[name], ctx.templateKwargs, key, fallback);
  const enableThinking = value("enable_thinking", true);
  const preserveThinking = name !== "qwen3.5" && value("preserve_thinking", name === "qwen3.8");
  const text = new Qwen35TextRenderer({
    argumentValues: name === "qwen3.5" ? "python" : "json",
    enableThinking,
    preserveThinking,
    qwen38: name === "qwen3.8"
      ? {
        reasoningInstructions: enableThinking
          ? EFFORT_INSTRUCTIONS[value("reasoning_effort", "xhigh")]
          : "",
      }
      : undefined,
  });
  const { ids, output } = await chatmlXmlOutput(ctx, name, enableThinking);
  return {
    family: name,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, "<|im_end|>", "<|im_start|>"),
    ...output,
    ...ids,
    quirks: {
      argumentRendering: name !== "qwen3.5"
        ? "XML <parameter> values: strings raw, other values JSON (true, null, 1.0)"
        : "XML <parameter> values: strings raw, containers JSON, scalars Python str() " +
          "(True, None, 1.0)",
      dropsOldReasoning: !preserveThinking,
      promptOpensReasoning: enableThinking,
    },
  };
}

/** Qwen3.8's template: Qwen3.6's markers plus its `reasoning_effort` instruction. */
function isQwen38(t: string): boolean {
  return t.includes("preserve_thinking") && t.includes("reasoning_effort");
}

export const qwen35: ModelFamily = {
  name: "qwen3.5",
  templateOptions: QWEN_XML_TEMPLATE_OPTIONS["qwen3.5"],
  summary: "Qwen3.5: <think> reasoning, XML tool calls, Python str() scalar arguments",
  detect: (files) => {
    const t = template(files);
    return hasXmlToolCalls(t) && t.includes("<think>") && !t.includes("preserve_thinking");
  },
  bind: (ctx) => bind(ctx, "qwen3.5"),
};

export const qwen36: ModelFamily = {
  name: "qwen3.6",
  templateOptions: QWEN_XML_TEMPLATE_OPTIONS["qwen3.6"],
  summary: "Qwen3.6: Qwen3.5 with JSON scalar arguments and preserve_thinking",
  detect: (files) => {
    const t = template(files);
    return hasXmlToolCalls(t) && t.includes("<think>") && t.includes("preserve_thinking") &&
      !isQwen38(t);
  },
  bind: (ctx) => bind(ctx, "qwen3.6"),
};

export const qwen38: ModelFamily = {
  name: "qwen3.8",
  templateOptions: QWEN_XML_TEMPLATE_OPTIONS["qwen3.8"],
  summary: "Qwen3.8: Qwen3.6 keeping reasoning by default, reasoning_effort in the system turn",
  detect: (files) => {
    const t = template(files);
    return hasXmlToolCalls(t) && t.includes("<think>") && isQwen38(t);
  },
  bind: (ctx) => bind(ctx, "qwen3.8"),
};
