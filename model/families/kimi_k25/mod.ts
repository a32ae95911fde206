/**
 * Kimi K2.5 / K2.6 (`kimi-k2.5`): Kimi K2's turns and tool-calls sections, plus `<think>`
 * reasoning (text, not added tokens) and TypeScript-style tool declarations. Written in code from
 * the format (`render.ts`); detected from the chat template's markers (`<|im_middle|>`,
 * `<|tool_calls_section_begin|>` and the TypeScript declarations, `tools_ts_str`).
 *
 * Template variables (`--template-kwargs`): `thinking` (default true; false writes
 * `<think></think>` in the generation prompt), `preserve_thinking` (K2.6, default false: every
 * turn keeps its reasoning). Call ids are the policy's own (`functions.NAME:INDEX`) and round-trip
 * verbatim: agents echo what was sampled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { kimiK25 } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * const k25 = "<|im_middle|>{{ tools_ts_str }}<|tool_calls_section_begin|><think>";
 * assert.ok(kimiK25.detect(files(k25)));
 * // Kimi K2 (no TypeScript declarations) is another family.
 * assert.ok(!kimiK25.detect(files("<|im_middle|><|tool_calls_section_begin|>")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { kimiK25OutputFormat } from "./output.ts";
import { KimiK25TextRenderer } from "./render.ts";

/** The template variables Kimi K2.5 / K2.6 reads (`thinking` defaults to true, the other false). */
const KIMI_K25_TEMPLATE_OPTIONS: TemplateValueLists = {
  thinking: [true, false],
  preserve_thinking: [true, false],
};

/** A Kimi K2.5 / K2.6 chat template (TypeScript tool declarations, `<think>` turns). */
function isKimiK25Template(t: string): boolean {
  return t.includes("<|im_middle|>") && t.includes("<|tool_calls_section_begin|>") &&
    t.includes("tools_ts_str");
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const name = "kimi-k2.5";
  const need = (token: string) => requireToken(ctx, name, token);
  for (
    const token of [
      "<|im_user|>",
      "<|im_assistant|>",
      "<|im_system|>",
      "<|im_middle|>",
      "<|tool_calls_section_begin|>",
      "<|tool_calls_section_end|>",
      "<|tool_call_begin|>",
      "<|tool_call_argument_begin|>",
      "<|tool_call_end|>",
    ]
  ) need(token);
  const imEnd = need("<|im_end|>");
  const eos = ctx.idOf("[EOS]");
  const stop = eos === undefined ? [imEnd] : [imEnd, eos];
  const value = (key: string, fallback: boolean) =>
    templateValue(name, KIMI_K25_TEMPLATE_OPTIONS, ctx.templateKwargs, key, fallback);
  const thinking = value("thinking", true);
  const preserveThinking = value("preserve_thinking", false);
  const text = new KimiK25TextRenderer({ thinking, preserveThinking });
  return Promise.resolve({
    family: name,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, "<|im_end|>", "<|im_assistant|>"),
    ...kimiK25OutputFormat(thinking, stop, (ids) => ctx.tokenizer.decode(ids)),
    endOfTurn: { id: imEnd, text: "<|im_end|>" },
    stopTokenIds: stop,
    // Tool outputs sit after a `## Return of ID` header, not between markers of their own.
    toolResponseMarkers: null,
    quirks: {
      argumentRendering: "JSON arguments verbatim; call ids functions.NAME:INDEX as sampled",
      dropsOldReasoning: !preserveThinking,
      promptOpensReasoning: thinking,
      // `<think>` is text: a full render tokenizes the prompt's `<think>` (or `</think>`) together
      // with the sampled text after it (`>` joins the next word), where the policy sampled after
      // the prompt's own ids.
      rewritesAnswers: ["the generation prompt's <think> text tokenized together with the answer"],
    },
    notes: [
      "kimi-k2.5: tool-call ids are the policy's own (functions.NAME:INDEX); <think> is text, so " +
      "a full re-render tokenizes an earlier answer's first word with the prompt's <think> " +
      "(reported where prompts differ)",
    ],
  });
}

export const kimiK25: ModelFamily = {
  name: "kimi-k2.5",
  templateOptions: KIMI_K25_TEMPLATE_OPTIONS,
  summary: "Kimi K2.5/K2.6: K2 turns and sections, <think> reasoning, TypeScript tool declarations",
  detect: (files) => isKimiK25Template(template(files)),
  bind,
};
