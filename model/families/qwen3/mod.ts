/**
 * Qwen3 (2025 release): ChatML, `<think>` reasoning, hermes JSON tool calls
 * (`<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`). Rendered through the model's own
 * chat template (cross-checked against `transformers.apply_chat_template`); the template drops
 * earlier turns' reasoning after a new user message. For the bundled Qwen3's template, renders
 * without tools (every turn's delta and answer) are written in code (`render.ts`), held to the
 * template by `render_test.ts`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { qwen3 } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * const hermes = "<tool_call>\n{{ tool_call | tojson }}\n</tool_call>";
 * assert.ok(qwen3.detect(files(hermes, ["<think>", "</think>"])));
 * assert.ok(!qwen3.detect(files(hermes))); // no reasoning tokens: not Qwen3
 * ```
 *
 * @module
 */
import { addedTokenIds } from "../../model_files.ts";
import type { ModelFamily, OutputFormat } from "../family.ts";
import { bindJinjaFormat, type OutputContext } from "../jinja_format.ts";
import { hasXmlToolCalls } from "../qwen35/mod.ts";
import { ThinkStreamParser, type ThinkTagRules } from "../think_tags.ts";
import { HermesParser } from "./hermes_parser.ts";
import { isCheckedQwen3Template, Qwen3TextRenderer } from "./render.ts";

export { qwen3SampledText } from "./sampled_text.ts";

/**
 * Reads hermes JSON tool calls after optional `<think>` reasoning (Qwen3's rules: newlines
 * trimmed; without think tokens in the vocabulary, as Qwen2.5's, nothing is reasoning).
 */
export function hermesOutputFormat(ctx: OutputContext): OutputFormat {
  const rules: ThinkTagRules = {
    thinkStart: ctx.idOf("<think>") ?? -1,
    thinkEnd: ctx.idOf("</think>") ?? -1,
    endOfTurn: ctx.endOfTurn,
    promptOpensReasoning: ctx.promptOpensReasoning,
    trim: "newlines",
    toolCallStart: { text: "<tool_call>", id: ctx.idOf("<tool_call>") },
  };
  return {
    parser: new HermesParser(rules, ctx.decode),
    streamingParser: () => new ThinkStreamParser(rules, ctx.decode),
  };
}

export const qwen3: ModelFamily = {
  name: "qwen3",
  templateOptions: { enable_thinking: [true, false] },
  summary: "Qwen3: <think> reasoning, hermes JSON tool calls, the model's own chat template",
  detect: (files) => {
    const t = files.config.chat_template ?? "";
    const added = addedTokenIds(files.config);
    return t.includes("<tool_call>") && !hasXmlToolCalls(t) && added.has("<think>") &&
      added.has("</think>");
  },
  bind: (ctx) =>
    bindJinjaFormat(ctx, {
      family: "qwen3",
      argumentRendering: "hermes JSON: the arguments string verbatim inside " +
        '{"name": …, "arguments": …}',
      output: hermesOutputFormat,
      inCode: (template) =>
        isCheckedQwen3Template(template.template.source)
          ? new Qwen3TextRenderer(template, template.kwargs.enable_thinking)
          : template,
    }),
};
