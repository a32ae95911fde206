/**
 * Families rendered through the model's own Jinja chat template (`tokenizer_config.json`):
 * Qwen3, Qwen3-Coder and the generic family for any other model directory. The template is
 * exact by construction (up to `@huggingface/jinja`'s number formatting, see `chat_template.ts`);
 * the family chooses only how output is read.
 *
 * What the template does is probed once, at bind time: whether its generation prompt opens
 * reasoning (`<think>` left open), and whether it drops an earlier turn's reasoning after a new
 * user message.
 *
 * @module
 */
import { ChatTemplate } from "../chat_template.ts";
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { tokenText } from "../model_files.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../template_input.ts";
import { turnIds } from "./chatml_ids.ts";
import { type ChatFormat, type FamilyContext, FamilyError, type OutputFormat } from "./family.ts";
import { type TextRenderer, TokenizedRenderer } from "./text_renderer.ts";

/** A chat template as a `TextRenderer`. */
export class JinjaTextRenderer implements TextRenderer {
  /**
   * @param argumentsAsObject give templates tool-call arguments as objects, not JSON strings
   *   (templates that iterate `tool_call.arguments|items`, such as Qwen3-Coder's)
   */
  constructor(
    readonly template: ChatTemplate,
    readonly kwargs: Record<string, unknown>,
    readonly argumentsAsObject = false,
  ) {}

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    let msgs = toTemplateMessages(messages);
    if (this.argumentsAsObject) msgs = msgs.map(withArgumentObjects);
    return this.template.render(msgs, toTemplateTools(tools), {
      addGenerationPrompt,
      kwargs: this.kwargs,
    });
  }
}

/** Tool-call arguments that are a JSON object, as that object (others stay strings). */
function withArgumentObjects(m: TemplateMessage): TemplateMessage {
  if (!m.tool_calls) return m;
  return {
    ...m,
    tool_calls: m.tool_calls.map((c) => {
      let args: unknown;
      try {
        args = JSON.parse(c.function.arguments);
      } catch {
        return c;
      }
      if (typeof args !== "object" || args === null || Array.isArray(args)) return c;
      // Templates read `arguments` as a mapping; its JSON text is not what they render.
      return { ...c, function: { ...c.function, arguments: args as unknown as string } };
    }),
  };
}

/** What an output format is built from. */
export interface OutputContext {
  /** Id of an added token, if the vocabulary has it. */
  idOf(token: string): number | undefined;
  decode(ids: number[]): Promise<string>;
  /** Ids that end a turn (stripped from the end of an output). */
  endOfTurn: readonly number[];
  /** The generation prompt opens reasoning. */
  promptOpensReasoning: boolean;
  /** The template renders reasoning in `<think>` tags (if not, output has no reasoning). */
  thinkTags: boolean;
}

/** `<think>` and `</think>` when the template renders reasoning in them, else -1 for both. */
export function outputThinkIds(ctx: OutputContext): { thinkStart: number; thinkEnd: number } {
  if (!ctx.thinkTags) return { thinkStart: -1, thinkEnd: -1 };
  return { thinkStart: ctx.idOf("<think>") ?? -1, thinkEnd: ctx.idOf("</think>") ?? -1 };
}

export interface JinjaFamilyOptions {
  family: string;
  argumentsAsObject?: boolean;
  /** For `FamilyQuirks.argumentRendering`. */
  argumentRendering: string;
  output(ctx: OutputContext): OutputFormat;
  /**
   * The family's text in code for a template it was checked against (else the template itself):
   * what a turn's renders run instead of the Jinja interpreter.
   */
  inCode?(template: JinjaTextRenderer): TextRenderer;
}

const PROBE = "\u2063rollgate-reasoning-probe\u2063";

/** Binds a Jinja-template family: the template renders, `options.output` parses. */
export async function bindJinjaFormat(
  ctx: FamilyContext,
  options: JinjaFamilyOptions,
): Promise<ChatFormat> {
  const { config } = ctx.files;
  if (typeof config.chat_template !== "string") {
    throw new FamilyError(`${options.family}: ${ctx.files.dir} has no chat template`);
  }
  const eos = tokenText(config.eos_token);
  if (eos === null || ctx.idOf(eos) === undefined) {
    throw new FamilyError("tokenizer_config.json needs an eos_token that is an added token");
  }
  const template = new JinjaTextRenderer(
    new ChatTemplate(config.chat_template, config),
    ctx.templateKwargs,
    options.argumentsAsObject,
  );
  const text = options.inCode?.(template) ?? template;
  const ids = await turnIds(ctx, options.family, eos);
  const turnStart = config.chat_template.includes("<|im_start|>") ? "<|im_start|>" : eos;
  const prompt = text.render([{ role: "user", content: "." }], [], { addGenerationPrompt: true });
  const promptOpensReasoning = prompt.lastIndexOf("<think>") > prompt.lastIndexOf("</think>");
  let dropsOldReasoning = true;
  try {
    dropsOldReasoning = !text.render(
      [
        { role: "user", content: "a" },
        { role: "assistant", content: "b", reasoning_content: PROBE },
        { role: "user", content: "c" },
      ],
      [],
      { addGenerationPrompt: true },
    ).includes(PROBE);
  } catch { /* a template that refuses the probe: assume the common case */ }
  const output = options.output({
    idOf: ctx.idOf,
    decode: (ids) => ctx.tokenizer.decode(ids),
    endOfTurn: ids.stopTokenIds,
    promptOpensReasoning,
    thinkTags: config.chat_template.includes("<think>"),
  });
  return {
    family: options.family,
    renderer: new TokenizedRenderer(text, ctx.tokenizer, eos, turnStart),
    ...output,
    ...ids,
    quirks: {
      argumentRendering: options.argumentRendering,
      dropsOldReasoning,
      promptOpensReasoning,
    },
  };
}
