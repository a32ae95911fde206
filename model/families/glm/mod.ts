/**
 * The GLM families: `glm-4.5` (GLM-4.5, 4.5-Air, 4.6), `glm-5` (GLM-4.7, GLM-5), `glm-5.1` and
 * `glm-5.3`.
 * Role markers and no end-of-message token, `<think>` reasoning, `<arg_key>`/`<arg_value>` tool
 * calls, tool results under `<|observation|>`; the policy stops on `<|observation|>`, `<|user|>`
 * or `<|endoftext|>`. Written in code from the format (`render.ts`), so a model directory needs
 * only its tokenizer files; detected from the chat template's markers.
 *
 * Template variables (`--template-kwargs`, declared per layout in `GLM_TEMPLATE_OPTIONS`):
 * `enable_thinking` (default true; not GLM-5.3, which always thinks), `clear_thinking` (GLM-5
 * layouts, default true: earlier turns' reasoning leaves later prompts; GLM-5.3 default false),
 * `reasoning_effort` (GLM-5.3: `low`, `high`, `max` (default)).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { glm45, glm5, glm51 } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * const glm5Template = "[gMASK]<sop>{% for m in messages %}<|{{ m.role }}|>{% endfor %}";
 * assert.ok(glm5.detect(files(glm5Template)));
 * assert.ok(!glm45.detect(files(glm5Template)) && !glm51.detect(files(glm5Template)));
 * assert.ok(glm45.detect(files("[gMASK]<sop></arg_key>\n<arg_value>")));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import {
  type ChatFormat,
  type FamilyContext,
  FamilyError,
  type ModelFamily,
  requireToken,
} from "../family.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { GlmRenderer } from "./glm_renderer.ts";
import { glmOutputFormat } from "./output.ts";
import { type GlmLayout, GlmTextRenderer } from "./render.ts";

export { GlmTextRenderer } from "./render.ts";
export { glmOutputFormat } from "./output.ts";
export { type GlmCallMarkers, splitGlmToolCalls } from "./tool_calls.ts";

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

/**
 * A GLM chat template: the `[gMASK]<sop>` prefix, or the `<|observation|>` marker with
 * `<arg_key>` calls. `wide`: the GLM-4.5 layout, whose tool instructions put a newline between
 * `</arg_key>` and `<arg_value>`.
 */
function glmTemplateLayout(t: string): GlmLayout | null {
  const glm = t.includes("[gMASK]<sop>") ||
    (t.includes("<|observation|>") && t.includes("<arg_key>"));
  if (!glm) return null;
  if (t.includes("</arg_key>\\n<arg_value>") || t.includes("</arg_key>\n<arg_value>")) {
    return "glm-4.5";
  }
  // GLM-5.3 opens with a reasoning-effort preamble.
  if (t.includes("Reasoning Effort")) return "glm-5.3";
  // GLM-5.1 lists each tool's `function` object without its `defer_loading`/`strict` keys.
  return t.includes("defer_loading") ? "glm-5.1" : "glm-5";
}

const FLAG = [true, false];

/** The template variables each layout reads (GLM-5.3 always thinks). */
const GLM_TEMPLATE_OPTIONS: Record<GlmLayout, TemplateValueLists> = {
  "glm-4.5": { enable_thinking: FLAG },
  "glm-5": { enable_thinking: FLAG, clear_thinking: FLAG },
  "glm-5.1": { enable_thinking: FLAG, clear_thinking: FLAG },
  "glm-5.3": { clear_thinking: FLAG, reasoning_effort: ["low", "high", "max"] },
};

async function bind(ctx: FamilyContext, layout: GlmLayout): Promise<ChatFormat> {
  if (layout === "glm-5.3" && ctx.templateKwargs.enable_thinking === false) {
    throw new FamilyError("glm-5.3 always thinks: enable_thinking=false is not accepted");
  }
  const options = GLM_TEMPLATE_OPTIONS[layout];
  const value = <T extends boolean | string>(key: string, fallback: T) =>
    key in options ? templateValue(layout, options, ctx.templateKwargs, key, fallback) : fallback;
  // Fixed where the layout reads no variable: GLM-4.5 clears, GLM-5.3 thinks.
  const enableThinking = value("enable_thinking", true);
  const clearThinking = value("clear_thinking", layout !== "glm-5.3");
  const reasoningEffort = value("reasoning_effort", "max");
  const need = (token: string) => requireToken(ctx, layout, token);
  for (const token of ["[gMASK]", "<sop>", "<|system|>", "<|assistant|>", "</arg_value>"]) {
    need(token);
  }
  const user = need("<|user|>"), observation = need("<|observation|>");
  const endOfText = ctx.idOf("<|endoftext|>");
  const stop = endOfText === undefined ? [user, observation] : [endOfText, user, observation];
  const text = new GlmTextRenderer({ layout, enableThinking, clearThinking, reasoningEffort });
  const newline = await ctx.tokenizer.encode("\n");
  const output = glmOutputFormat(
    {
      thinkStart: enableThinking ? need("<think>") : -1,
      thinkEnd: enableThinking ? need("</think>") : -1,
      toolCall: need("<tool_call>"),
      stop,
    },
    enableThinking && layout !== "glm-4.5",
    (ids) => ctx.tokenizer.decode(ids),
  );
  return {
    family: layout,
    renderer: new GlmRenderer(text, ctx.tokenizer),
    ...output,
    endOfTurn: { id: user, text: "<|user|>" },
    closingMarkers: [user, observation],
    stopTokenIds: stop,
    toolResponseMarkers: {
      open: need("<tool_response>"),
      close: need("</tool_response>"),
      // GLM-4.5 wraps the output in newlines; the GLM-5 layouts do not.
      newline: layout === "glm-4.5" && newline.length === 1 ? newline[0] : -1,
    },
    quirks: {
      argumentRendering: layout === "glm-4.5"
        ? "<arg_key>/<arg_value> pairs, newline-separated: strings raw, other values JSON"
        : "<arg_key>/<arg_value> pairs: strings raw, other values JSON",
      dropsOldReasoning: clearThinking,
      promptOpensReasoning: enableThinking && layout !== "glm-4.5",
    },
    notes: [
      `${layout}: a turn ends on the next role marker (<|observation|> or <|user|>), which the ` +
      "policy samples as its stop id; nothing is bridged",
    ],
  };
}

function family(layout: GlmLayout, summary: string): ModelFamily {
  return {
    name: layout,
    templateOptions: GLM_TEMPLATE_OPTIONS[layout],
    summary,
    detect: (files) => glmTemplateLayout(template(files)) === layout,
    bind: (ctx) => bind(ctx, layout),
  };
}

export const glm45: ModelFamily = family(
  "glm-4.5",
  "GLM-4.5/4.5-Air/4.6: <arg_key>/<arg_value> tool calls, newline after role markers",
);
export const glm5: ModelFamily = family(
  "glm-5",
  "GLM-4.7/GLM-5: <arg_key>/<arg_value> tool calls, <think> opened by the prompt, clear_thinking",
);
export const glm51: ModelFamily = family(
  "glm-5.1",
  "GLM-5.1: GLM-5 with tools listed unwrapped and an empty <think></think> on the last turn",
);
export const glm53: ModelFamily = family(
  "glm-5.3",
  "GLM-5.3: GLM-5.1 always thinking, a reasoning-effort preamble, reasoning kept, results in call order",
);
