/**
 * DeepSeek V3 and DeepSeek R1: V3.1's turn tokens (`<｜User｜>`, `<｜Assistant｜>`,
 * `<｜end▁of▁sentence｜>`) with V3's own calls,
 * `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{json}\n```<｜tool▁call▁end｜>`, and
 * tool outputs inside `<｜tool▁outputs▁begin｜>…<｜tool▁outputs▁end｜>` (`render.ts`). V3 does not
 * reason; R1 always does: its generation prompt opens `<think>\n` and history keeps no reasoning
 * (not prefix-stable: every later prompt keeps the sampled reasoning a re-render drops). Neither
 * template declares tools, so none are in the prompt.
 *
 * Detection: a chat template with `<｜tool▁sep｜>` and the ```` ```json ```` fence (V3.1 writes
 * none); R1's also handles `</think>`. R1's vocabulary must hold `<think>` and `</think>`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { deepSeekR1, deepSeekV3 } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * const v3 = "{{ '<｜tool▁call▁begin｜>' + type + '<｜tool▁sep｜>' + name + '\\n```json' }}";
 * assert.ok(deepSeekV3.detect(files(v3)) && !deepSeekR1.detect(files(v3)));
 * const r1 = v3 + "{% set content = content.split('</think>')[-1] %}";
 * assert.ok(deepSeekR1.detect(files(r1)) && !deepSeekV3.detect(files(r1)));
 * ```
 *
 * @module
 */
import type { ModelFiles } from "../../model_files.ts";
import { type ChatFormat, type FamilyContext, type ModelFamily, requireToken } from "../family.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { deepSeekOutputFormat, DS } from "../deepseek_v31/mod.ts";
import { DeepSeekV3TextRenderer, DS_V3 } from "./render.ts";

export { DeepSeekV3TextRenderer } from "./render.ts";

type DeepSeekV3Name = "deepseek-v3" | "deepseek-r1";

function bind(ctx: FamilyContext, name: DeepSeekV3Name): Promise<ChatFormat> {
  const r1 = name === "deepseek-r1";
  const need = (token: string) => requireToken(ctx, name, token);
  for (const t of [DS.bos, DS.user, DS.assistant, DS.callBegin, DS.callEnd, DS.sep, DS.callsEnd]) {
    need(t);
  }
  for (const t of [DS_V3.outputsBegin, DS_V3.outputsEnd]) need(t);
  const eos = need(DS.eos);
  const text = new DeepSeekV3TextRenderer({ r1 });
  const output = deepSeekOutputFormat(
    {
      thinkStart: r1 ? need(DS.think) : -1,
      thinkEnd: r1 ? need(DS.thinkEnd) : -1,
      callsBegin: need(DS.callsBegin),
      endOfTurn: [eos],
      promptOpensReasoning: r1,
    },
    (ids) => ctx.tokenizer.decode(ids),
    "v3",
  );
  return Promise.resolve({
    family: name,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, DS.eos, [DS.user, DS.outputBegin]),
    ...output,
    endOfTurn: { id: eos, text: DS.eos },
    stopTokenIds: [eos],
    toolResponseMarkers: {
      open: need(DS.outputBegin),
      close: need(DS.outputEnd),
      // No newline wraps a DeepSeek tool output.
      newline: -1,
    },
    quirks: {
      argumentRendering: "the arguments JSON string verbatim in a ```json fence",
      dropsOldReasoning: r1,
      promptOpensReasoning: r1,
      // R1's history keeps only the text after `</think>`, in a tool loop too.
      rewritesAnswers: r1
        ? ["an answer's reasoning and its </think> are left out of history, in a tool loop too"]
        : [],
    },
    notes: [
      `${name}: the model's template declares no tools, so the agent's tools are not in the ` +
      "prompt (put their description in the system prompt to show them to the policy)",
      ...(r1
        ? [
          `${name}: history keeps no reasoning, so later prompts keep sampled ids a full ` +
          "render would not (reported by audit)",
        ]
        : []),
    ],
  });
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

/** V3's and R1's templates: V3's call separator inside a ```` ```json ```` fence. */
function isDeepSeekV3Style(t: string): boolean {
  return t.includes(DS.sep) && t.includes("```json");
}

export const deepSeekV3: ModelFamily = {
  name: "deepseek-v3",
  templateOptions: {},
  summary: "DeepSeek V3: function<｜tool▁sep｜>NAME + ```json calls, no reasoning",
  detect: (files) => isDeepSeekV3Style(template(files)) && !template(files).includes(DS.thinkEnd),
  bind: (ctx) => bind(ctx, "deepseek-v3"),
};

export const deepSeekR1: ModelFamily = {
  name: "deepseek-r1",
  templateOptions: {},
  summary: "DeepSeek R1: DeepSeek V3's calls, <think> always, no reasoning in history",
  detect: (files) => isDeepSeekV3Style(template(files)) && template(files).includes(DS.thinkEnd),
  bind: (ctx) => bind(ctx, "deepseek-r1"),
};
