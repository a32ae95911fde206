/**
 * Nemotron 3 (Nano, Super), Nemotron 3 Ultra and Nemotron 3.5: ChatML with `<think>` reasoning
 * opened by the generation prompt, Qwen3-Coder XML tool calls (read by the Qwen3.5 XML parser),
 * tools declared as XML, a think block on every assistant turn and a system turn always
 * (`render.ts`). Ultra and 3.5 glue the think block without newlines around `</think>` and keep a
 * truncated turn's text untrimmed. Written in code, so a model directory needs only its tokenizer
 * files; detected from the chat template's markers.
 *
 * Template variables (`--template-kwargs`, declared in `NEMOTRON_3_TEMPLATE_OPTIONS`): `enable_thinking`
 * (default true), `truncate_history_thinking` (default true, as the template: turns before the
 * last user message lose their reasoning; false keeps every prompt append-only). Super's
 * `low_effort` and Ultra's `medium_effort` hints are not supported: they ride on the newest user
 * message, so they would move in every earlier prompt.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { nemotron3, nemotron35, nemotron3Ultra } from "./mod.ts";
 *
 * // Model files with only a chat template (and added tokens): enough to detect a family.
 * const files = (chat_template: string, added: string[] = []) =>
 *   ({
 *     config: {
 *       chat_template,
 *       added_tokens_decoder: Object.fromEntries(added.map((content, i) => [i, { content }])),
 *     },
 *   }) as unknown as ModelFiles;
 * const xml = "<function=name><parameter=x>{% if truncate_history_thinking %}{% endif %}";
 * const nano = xml + "{{ '<think>\\n' + r + '\\n</think>\\n' }}";
 * assert.ok(nemotron3.detect(files(nano)));
 * assert.ok(!nemotron3.detect(files("<function=name><parameter=x>"))); // Qwen3-Coder
 * assert.ok(nemotron3Ultra.detect(files(nano + "{% if medium_effort %}{% endif %}")));
 * assert.ok(nemotron35.detect(files(xml + "{{ '<think>\\n' + r + '</think>' }}")));
 * ```
 *
 * @module
 */
import type { AssistantMessage } from "../../../canonical/mod.ts";
import type { ModelFiles } from "../../model_files.ts";
import { toTemplateMessages } from "../../template_input.ts";
import type { TextTokenizer } from "../../tokenizer.ts";
import {
  type AnswerInPlace,
  type ChatFormat,
  type FamilyContext,
  type ModelFamily,
} from "../family.ts";
import { chatmlXmlOutput, hasXmlToolCalls } from "../qwen35/mod.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { NemotronTextRenderer } from "./render.ts";

export { NemotronTextRenderer } from "./render.ts";
export { declarationValue, pythonStr } from "./tool_declarations.ts";

/** The template variables Nemotron 3 reads (both default to true). */
const NEMOTRON_3_TEMPLATE_OPTIONS: TemplateValueLists = {
  enable_thinking: [true, false],
  truncate_history_thinking: [true, false],
};

/**
 * Nemotron's renderer: an answer without reasoning is written `<think></think>CONTENT` in
 * history, which does not continue the generation prompt's `<think>\n`; the policy closes the
 * empty block itself (`\n</think>\n`), as it does after reasoning.
 */
class NemotronRenderer extends TokenizedRenderer {
  constructor(readonly nemotron: NemotronTextRenderer, tokenizer: TextTokenizer) {
    super(nemotron, tokenizer, "<|im_end|>", "<|im_start|>");
  }

  override answerText(message: AssistantMessage): string | null {
    const body = this.nemotron.assistantBody(toTemplateMessages([message])[0], true);
    const tail = this.nemotron.generationTail;
    if (body.startsWith(tail)) return body.slice(tail.length) + "<|im_end|>";
    if (tail === "<think>\n" && body.startsWith("<think></think>")) {
      // Empty reasoning closed the way the variant glues `</think>`.
      const close = this.nemotron.ultra ? "</think>" : "\n</think>\n";
      return close + body.slice("<think></think>".length) + "<|im_end|>";
    }
    return null;
  }

  /** A full render writes `<think></think>…` where the prompt's `<think>\n` and the answer are. */
  override async renderAnswerInPlace(message: AssistantMessage): Promise<AnswerInPlace | null> {
    const body = this.nemotron.assistantBody(toTemplateMessages([message])[0], true);
    const tail = this.nemotron.generationTail;
    if (tail !== "<think>\n" || !body.startsWith("<think></think>")) return null;
    const [prompt, rendered] = await Promise.all([
      this.encode("\n"),
      this.encode(body.slice("<think>".length) + "<|im_end|>"),
    ]);
    return { prompt, rendered };
  }
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

type NemotronName = "nemotron-3" | "nemotron-3-ultra" | "nemotron-3.5";

/** Nano's and Super's think-block glue, `\n</think>\n`, as a Jinja string literal or text. */
function hasNanoGlue(t: string): boolean {
  return t.includes("\\n</think>\\n") || t.includes("\n</think>\n");
}

/**
 * Which Nemotron 3 template a directory has: XML calls and `truncate_history_thinking`, then
 * Ultra's `medium_effort` hint, else Nano's/Super's glue (`\n</think>\n`), else 3.5 (Ultra's
 * glue without the hint).
 */
function nemotronVariant(t: string): NemotronName | null {
  if (!hasXmlToolCalls(t) || !t.includes("truncate_history_thinking")) return null;
  if (t.includes("medium_effort")) return "nemotron-3-ultra";
  return hasNanoGlue(t) ? "nemotron-3" : "nemotron-3.5";
}

async function bind(ctx: FamilyContext, name: NemotronName): Promise<ChatFormat> {
  const value = (key: string) =>
    templateValue(name, NEMOTRON_3_TEMPLATE_OPTIONS, ctx.templateKwargs, key, true);
  const enableThinking = value("enable_thinking");
  const truncate = value("truncate_history_thinking");
  const text = new NemotronTextRenderer({
    enableThinking,
    truncateHistoryThinking: truncate,
    glue: name === "nemotron-3" ? "nano" : "ultra",
  });
  const { ids, output } = await chatmlXmlOutput(ctx, name, enableThinking);
  return {
    family: name,
    renderer: new NemotronRenderer(text, ctx.tokenizer),
    ...output,
    ...ids,
    quirks: {
      argumentRendering:
        "XML <parameter> values: strings raw, containers JSON, scalars Python str() (True, None)",
      dropsOldReasoning: truncate,
      promptOpensReasoning: enableThinking,
    },
  };
}

function nemotronFamily(name: NemotronName, summary: string): ModelFamily {
  return {
    name,
    templateOptions: NEMOTRON_3_TEMPLATE_OPTIONS,
    summary,
    detect: (files) => nemotronVariant(template(files)) === name,
    bind: (ctx) => bind(ctx, name),
  };
}

export const nemotron3: ModelFamily = nemotronFamily(
  "nemotron-3",
  "Nemotron 3 Nano/Super: <think> on every turn, XML tool calls and declarations",
);

export const nemotron3Ultra: ModelFamily = nemotronFamily(
  "nemotron-3-ultra",
  "Nemotron 3 Ultra: Nemotron 3 with <think>R</think> glued to the answer",
);

export const nemotron35: ModelFamily = nemotronFamily(
  "nemotron-3.5",
  "Nemotron 3.5 (Lightning): Ultra's think glue, no effort hint",
);
