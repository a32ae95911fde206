/**
 * Qwen3-Coder: ChatML without reasoning, XML tool calls (the output format of Qwen3.5), tools
 * listed as XML in the system turn. Rendered through the model's own chat template, which reads
 * tool-call arguments as a mapping; parsed with the Qwen3.5 XML parser.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { qwen3Coder } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * assert.ok(qwen3Coder.detect(files("<function=name><parameter=x>")));
 * assert.ok(!qwen3Coder.detect(files("<think><function=name><parameter=x>"))); // reasons: Qwen3.5
 * ```
 *
 * @module
 */
import { type ModelFamily, type OutputFormat, requireToken } from "../family.ts";
import { bindJinjaFormat, type OutputContext, outputThinkIds } from "../jinja_format.ts";
import { hasXmlToolCalls, xmlOutputFormat } from "../qwen35/mod.ts";

/** Reads XML tool calls, after `<think>` reasoning when the template has it. */
export function xmlToolCallOutput(ctx: OutputContext): OutputFormat {
  return xmlOutputFormat(
    {
      ...outputThinkIds(ctx),
      toolCall: requireToken(ctx, "qwen3_coder", "<tool_call>"),
      endOfTurn: ctx.endOfTurn,
    },
    ctx.promptOpensReasoning,
    ctx.decode,
  );
}

export const qwen3Coder: ModelFamily = {
  name: "qwen3-coder",
  // Its template reads no variable.
  templateOptions: {},
  summary: "Qwen3-Coder: XML tool calls, no reasoning, the model's own chat template",
  detect: (files) => {
    const t = files.config.chat_template ?? "";
    return hasXmlToolCalls(t) && !t.includes("<think>");
  },
  bind: (ctx) =>
    bindJinjaFormat(ctx, {
      family: "qwen3-coder",
      argumentsAsObject: true,
      argumentRendering: "XML <parameter> values as the model's template writes them",
      output: xmlToolCallOutput,
    }),
};
