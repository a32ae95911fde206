/**
 * Qwen3 (2025 release): ChatML, `<think>` reasoning, hermes JSON tool calls
 * (`<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`). Rendered through the model's own
 * chat template (cross-checked against `transformers.apply_chat_template`); the template drops
 * earlier turns' reasoning after a new user message.
 *
 * @module
 */
import { Qwen3Parser } from "../../parsers/qwen3.ts";
import { Qwen3StreamParser } from "../../parsers/qwen3_stream.ts";
import type { ModelFiles } from "../../model_files.ts";
import type { ModelFamily, OutputFormat } from "../family.ts";
import { bindJinjaFormat, type OutputContext } from "../jinja_format.ts";
import { hasXmlToolCalls } from "../qwen35/mod.ts";

/** Reads hermes JSON tool calls after optional `<think>` reasoning. */
export function hermesOutputFormat(ctx: OutputContext): OutputFormat {
  // Without think tokens in the vocabulary (Qwen2.5) nothing is reasoning.
  const thinkStart = ctx.idOf("<think>") ?? -1, thinkEnd = ctx.idOf("</think>") ?? -1;
  const decode = ctx.decode;
  const ids = { thinkStart, thinkEnd, endOfTurn: [...ctx.endOfTurn] };
  return {
    parser: new Qwen3Parser(ids, decode),
    streamingParser: () =>
      new Qwen3StreamParser({ ...ids, toolCall: ctx.idOf("<tool_call>") }, decode),
  };
}

function addedToken(files: ModelFiles, token: string): boolean {
  return Object.values(files.config.added_tokens_decoder ?? {}).some((t) => t.content === token);
}

export const qwen3: ModelFamily = {
  name: "qwen3",
  summary: "Qwen3: <think> reasoning, hermes JSON tool calls, the model's own chat template",
  detect: (files) => {
    const t = files.config.chat_template ?? "";
    return t.includes("<tool_call>") && !hasXmlToolCalls(t) && addedToken(files, "<think>") &&
      addedToken(files, "</think>");
  },
  bind: (ctx) =>
    bindJinjaFormat(ctx, {
      family: "qwen3",
      argumentRendering: "hermes JSON: the arguments string verbatim inside " +
        '{"name": …, "arguments": …}',
      output: hermesOutputFormat,
    }),
};
