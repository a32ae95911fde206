/**
 * Llama 3.1 / 3.2 Instruct: header-delimited turns (`<|start_header_id|>ROLE<|end_header_id|>`,
 * `<|eot_id|>`), a system turn always (knowledge and today's date), tools as JSON in the first user
 * turn, one JSON tool call as the whole answer, results as `ipython` turns (`render.ts`). No
 * reasoning. Written in code, so a model directory needs only its tokenizer files.
 *
 * Template variables (`--template-kwargs`, `LLAMA_3_TEMPLATE_OPTIONS`): `date_string` (text;
 * default `26 Jul 2024`, the template's fallback: set it once per gateway or rollout, it is in
 * every prompt) and `tools_in_user_message` (default true).
 *
 * Detection: a template with `<|start_header_id|>` and the `Cutting Knowledge Date` preamble
 * (Llama 3.0's short template has neither the preamble nor tools: the generic family).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { llama3 } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * const t = "{{ '<|start_header_id|>system<|end_header_id|>\\n\\n' }}Cutting Knowledge Date: ";
 * assert.ok(llama3.detect(files(t)));
 * assert.ok(!llama3.detect(files("{{ '<|start_header_id|>' + role }}"))); // Llama 3.0
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { Llama3TextRenderer } from "./render.ts";
import { LLAMA3_CALL_START, splitLlama3ToolCall } from "./tool_calls.ts";

const NAME = "llama-3";

const LLAMA_3_TEMPLATE_OPTIONS: TemplateValueLists = {
  date_string: "text",
  tools_in_user_message: [true, false],
};

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const need = (token: string) => requireToken(ctx, NAME, token);
  for (const t of ["<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>"]) need(t);
  const eot = need("<|eot_id|>");
  // Llama 3.1+ ends a built-in tool's call with `<|eom_id|>`: a stop id too.
  const stops = [eot, need("<|eom_id|>"), need("<|end_of_text|>")];
  const value = <T extends boolean | string>(key: string, fallback: T) =>
    templateValue(NAME, LLAMA_3_TEMPLATE_OPTIONS, ctx.templateKwargs, key, fallback);
  const text = new Llama3TextRenderer({
    dateString: value("date_string", "26 Jul 2024"),
    toolsInUserMessage: value("tools_in_user_message", true),
  });
  const output = thinkToolCallOutput(
    "llama3_json",
    {
      thinkStart: -1,
      thinkEnd: -1,
      endOfTurn: stops,
      promptOpensReasoning: false,
      trim: "whitespace",
      toolCallStart: { text: LLAMA3_CALL_START },
    },
    (body, _tools, newToolCallId) => splitLlama3ToolCall(body, newToolCallId),
    (ids) => ctx.tokenizer.decode(ids),
  );
  return Promise.resolve({
    family: NAME,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, "<|eot_id|>", "<|start_header_id|>"),
    ...output,
    endOfTurn: { id: eot, text: "<|eot_id|>" },
    stopTokenIds: stops,
    // Tool results are `ipython` turns: no markers of their own.
    toolResponseMarkers: null,
    quirks: {
      argumentRendering: 'the arguments JSON string verbatim in {"name": …, "parameters": …}',
      dropsOldReasoning: false,
      promptOpensReasoning: false,
    },
    notes: [
      `${NAME}: one tool call per answer, the whole answer (the template's format)`,
    ],
  });
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

export const llama3: ModelFamily = {
  name: NAME,
  templateOptions: LLAMA_3_TEMPLATE_OPTIONS,
  summary: "Llama 3.1/3.2 Instruct: JSON tool calls, tools in the first user turn",
  detect: (files) => {
    const t = template(files);
    return t.includes("<|start_header_id|>") && t.includes("Cutting Knowledge Date");
  },
  bind,
};
