/**
 * Kimi K2 (`kimi-k2`): `<|im_user|>user<|im_middle|>…<|im_end|>` turns, tools declared in a
 * `tool_declare` system turn, tool calls in a `<|tool_calls_section_begin|>` section with the
 * policy's own call ids (`functions.NAME:INDEX`), no reasoning. Written in code from the format
 * (`render.ts`); detected from the chat template's markers (`<|im_middle|>` and
 * `<|tool_calls_section_begin|>`, without `<think>`: K2-Thinking and K2.5 reason, and are not this
 * family).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { kimiK2 } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * assert.ok(kimiK2.detect(files("<|im_middle|>{{ x }}<|tool_calls_section_begin|>")));
 * // K2-Thinking reasons: not this family.
 * assert.ok(!kimiK2.detect(files("<|im_middle|><|tool_calls_section_begin|><think>")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { kimiK2OutputFormat } from "./output.ts";
import { KimiK2TextRenderer } from "./render.ts";

export { kimiK2OutputFormat } from "./output.ts";
export { splitKimiToolCalls } from "./tool_calls.ts";
export { kimiToolCallsSection } from "./render.ts";

/** A Kimi K2 chat template (not K2-Thinking / K2.5, which reason in `<think>`). */
function isKimiK2Template(t: string): boolean {
  return t.includes("<|im_middle|>") && t.includes("<|tool_calls_section_begin|>") &&
    !t.includes("<think>");
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const name = "kimi-k2";
  const need = (token: string) => requireToken(ctx, name, token);
  for (
    const token of [
      "<|im_user|>",
      "<|im_system|>",
      "<|im_middle|>",
      "<|tool_calls_section_end|>",
      "<|tool_call_begin|>",
      "<|tool_call_argument_begin|>",
      "<|tool_call_end|>",
    ]
  ) need(token);
  need("<|im_assistant|>");
  const imEnd = need("<|im_end|>");
  const eos = ctx.idOf("[EOS]");
  const stop = eos === undefined ? [imEnd] : [imEnd, eos];
  return Promise.resolve({
    family: name,
    renderer: new TokenizedRenderer(
      new KimiK2TextRenderer(),
      ctx.tokenizer,
      "<|im_end|>",
      "<|im_assistant|>",
    ),
    ...kimiK2OutputFormat(
      need("<|tool_calls_section_begin|>"),
      stop,
      (ids) => ctx.tokenizer.decode(ids),
    ),
    endOfTurn: { id: imEnd, text: "<|im_end|>" },
    stopTokenIds: stop,
    // Tool outputs sit after a `## Return of ID` header, not between markers of their own.
    toolResponseMarkers: null,
    quirks: {
      argumentRendering: "JSON arguments verbatim; call ids functions.NAME:INDEX as sampled",
      dropsOldReasoning: false,
      promptOpensReasoning: false,
    },
    notes: [
      "kimi-k2: tool-call ids are the policy's own (functions.NAME:INDEX), so agents echo what " +
      "was sampled",
    ],
  });
}

export const kimiK2: ModelFamily = {
  name: "kimi-k2",
  templateOptions: {},
  summary: "Kimi K2: <|im_middle|> turns, tool-calls sections with functions.NAME:INDEX ids",
  detect: (files) => isKimiK2Template(template(files)),
  bind,
};
