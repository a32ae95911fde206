/**
 * Thinking Machines' Inkling and Inkling-Small: token-delimited segments (`render.ts`), every turn
 * keeping its reasoning, calls as `{"name":…,"args":…}` JSON segments, results named by their
 * tool (`output.ts` reads the segments back). Text turns: an image goes where `INKLING_VISION`
 * names, not rendered yet.
 *
 * Template variable (`INKLING_TEMPLATE_OPTIONS`): `reasoning_effort`, a label (`none`, `minimal`,
 * `low`, `medium`, `high`, `max`; default the template's `0.9`, which is `high`), written as the
 * `Thinking effort level` segment before the first message that is not a system message.
 *
 * Detection: a template with `<|message_model|>` and `Thinking effort level`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { ModelFiles } from "../../model_files.ts";
 * import { inkling } from "./mod.ts";
 *
 * const files = (chat_template: string) => ({ config: { chat_template } }) as unknown as ModelFiles;
 * assert.ok(inkling.detect(files("{{ '<|message_model|>' }}Thinking effort level: {{ e }}")));
 * assert.ok(!inkling.detect(files("<|im_start|>assistant\n")));
 * ```
 *
 * @module
 */
import type { Message, ToolSpec } from "../../../canonical/mod.ts";
import type { ModelFiles } from "../../model_files.ts";
import {
  type ChatFormat,
  type DeltaHistory,
  type FamilyContext,
  type ModelFamily,
  namedToolResults,
  type Rendered,
  type RenderOptions,
  requireToken,
} from "../family.ts";
import { templateValue, type TemplateValueLists } from "../template_values.ts";
import { TokenizedRenderer } from "../text_renderer.ts";
import { inklingOutputFormat } from "./output.ts";
import { INK, INKLING_EFFORTS, INKLING_VISION, InklingTextRenderer } from "./render.ts";

export { INK } from "./render.ts";

const NAME = "inkling";

const INKLING_TEMPLATE_OPTIONS: TemplateValueLists = {
  reasoning_effort: Object.keys(INKLING_EFFORTS),
};

/** A delta names each tool result by the call it answers, looked up in the history. */
class InklingRenderer extends TokenizedRenderer {
  override renderDelta(
    newMessages: readonly Message[],
    tools: readonly ToolSpec[] = [],
    options: RenderOptions = {},
    history?: DeltaHistory,
  ): Promise<Rendered> {
    const named = namedToolResults(newMessages, history);
    return super.renderDelta(named, tools, options);
  }
}

function bind(ctx: FamilyContext): Promise<ChatFormat> {
  const need = (token: string) => requireToken(ctx, NAME, token);
  for (const t of Object.values(INK)) need(t);
  const endSampling = need(INK.endSampling);
  const endOfText = ctx.idOf("<|endoftext|>");
  const stops = endOfText === undefined ? [endSampling] : [endSampling, endOfText];
  const label = templateValue(
    NAME,
    INKLING_TEMPLATE_OPTIONS,
    ctx.templateKwargs,
    "reasoning_effort",
    "high",
  ) as string;
  const text = new InklingTextRenderer(INKLING_EFFORTS[label]);
  const output = inklingOutputFormat(
    {
      model: need(INK.model),
      text: need(INK.text),
      thinking: need(INK.thinking),
      invoke: need(INK.invoke),
      end: need(INK.end),
      stops,
    },
    (ids) => ctx.tokenizer.decode(ids),
  );
  return Promise.resolve({
    family: NAME,
    renderer: new InklingRenderer(text, ctx.tokenizer, INK.endSampling, [
      INK.user,
      INK.tool,
      INK.system,
    ]),
    ...output,
    endOfTurn: { id: endSampling, text: INK.endSampling },
    stopTokenIds: stops,
    // Tool outputs sit in text segments: no markers of their own.
    toolResponseMarkers: null,
    vision: INKLING_VISION,
    quirks: {
      argumentRendering: 'compact, key-sorted JSON in {"name":…,"args":…}',
      dropsOldReasoning: false,
      promptOpensReasoning: false,
    },
  });
}

function template(files: ModelFiles): string {
  return files.config.chat_template ?? "";
}

export const inkling: ModelFamily = {
  name: NAME,
  templateOptions: INKLING_TEMPLATE_OPTIONS,
  summary: "Inkling: token-delimited segments, JSON tool calls, reasoning kept in every turn",
  detect: (files) => {
    const t = template(files);
    return t.includes("<|message_model|>") && t.includes("Thinking effort level");
  },
  bind,
};
