/**
 * The prompt text of Nemotron 3 Nano and Super, written from their chat format (ChatML,
 * `<think>` reasoning, Qwen3-Coder XML tool calls, tools declared as XML):
 *
 * - A system turn always opens the prompt: the system message verbatim (empty when there is none),
 *   then with tools (after a blank line when there is a system message) the tools header, one XML
 *   `<function>` block per tool (`tool_declarations.ts`) and the call-format instructions.
 * - User and tool text verbatim. Tool results: `<|im_start|>user\n`, then per result
 *   `<tool_response>\nOUTPUT\n</tool_response>\n`, then `<|im_end|>\n`.
 * - Every assistant turn opens with a think block: `<think>\nREASONING\n</think>\n` before its
 *   content when it has reasoning, else `<think></think>` glued to the content. The text is
 *   trimmed at its end (and the block trimmed as a whole before calls, then a newline). Calls:
 *   `<tool_call>\n<function=NAME>\n` + `<parameter=KEY>\nVALUE\n</parameter>\n` per argument +
 *   `</function>\n</tool_call>\n`; VALUE is a string as is, a container as `json.dumps`, a scalar
 *   as Python's `str()` (`True`, `None`, `1.0`).
 * - With `truncate_history_thinking` (the template's default), assistant turns before the last
 *   user message keep only `<think></think>` and what follows their reasoning: not append-only
 *   after a new user message. Off, every turn keeps its reasoning.
 * - Generation prompt: `<|im_start|>assistant\n<think>\n`, or `<|im_start|>assistant\n<think></think>`
 *   with thinking off.
 *
 * One deliberate difference: the template refuses a system message after the first message;
 * agents send them, so one is rendered in place as a system turn.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages } from "../../template_input.ts";
import { pythonStrip } from "../../python_json.ts";
import type { TextRenderer } from "../text_renderer.ts";
import { XML_CALL_INSTRUCTIONS, xmlToolCall } from "../qwen35/mod.ts";
import { nemotronToolDeclarations } from "./tool_declarations.ts";

export interface NemotronOptions {
  /** `enable_thinking` (default true): the generation prompt opens reasoning. */
  enableThinking: boolean;
  /** `truncate_history_thinking` (default true): turns before the last user lose reasoning. */
  truncateHistoryThinking: boolean;
  /**
   * How a think block is glued to what follows: Nano/Super write `<think>\nR\n</think>\nC` and
   * trim what a truncated turn keeps; Ultra and Nemotron 3.5 write `<think>\nR</think>C` and keep
   * it as it is. Default `nano`.
   */
  glue?: "nano" | "ultra";
  /** JSON in tool declarations as `renderers` writes it (`ensure_ascii`); test reference only. */
  asciiDeclarations?: boolean;
}

const TOOLS_HEADER = "# Tools\n\nYou have access to the following functions:\n\n<tools>\n";

export class NemotronTextRenderer implements TextRenderer {
  constructor(readonly options: NemotronOptions) {}

  /** The generation prompt after `<|im_start|>assistant\n`. */
  get generationTail(): string {
    return this.options.enableThinking ? "<think>\n" : "<think></think>";
  }

  /** The `<tool_call>…</tool_call>\n` block of one call. */
  toolCall(name: string, args: string): string {
    return xmlToolCall({ name, arguments: args }, "python") + "\n";
  }

  /** Ultra's and 3.5's glue: no newline around `</think>`, a truncated turn's rest untrimmed. */
  get ultra(): boolean {
    return this.options.glue === "ultra";
  }

  /** An assistant turn between `<|im_start|>assistant\n` and `<|im_end|>`. */
  assistantBody(m: TemplateMessage, keepReasoning: boolean): string {
    const reasoning = m.reasoning_content;
    let content = m.content;
    if (typeof reasoning === "string" && pythonStrip(reasoning)) {
      content = this.ultra
        ? `<think>\n${reasoning}</think>${content}`
        : `<think>\n${reasoning}\n</think>\n${content}`;
    } else if (!content.includes("<think>") && !content.includes("</think>")) {
      content = "<think></think>" + content;
    }
    const calls = m.tool_calls ?? [];
    let text: string;
    if (keepReasoning) {
      text = calls.length > 0 ? pythonStrip(content) + "\n" : pythonStrip(content);
    } else if (calls.length > 0) {
      const rest = content.includes("</think>")
        ? content.split("</think>").at(-1)!
        : content.split("<think>")[0];
      text = "<think></think>" + (this.ultra ? rest : pythonStrip(rest)) + "\n";
    } else {
      const both = content.includes("<think>") && content.includes("</think>");
      text = pythonStrip(both ? "<think></think>" + content.split("</think>").at(-1) : content);
    }
    for (const c of calls) text += this.toolCall(c.function.name, c.function.arguments);
    return text;
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const system = msgs[0]?.role === "system" ? msgs[0].content : "";
    const parts = ["<|im_start|>system\n", system];
    if (tools.length > 0) {
      parts.push(
        system ? "\n\n" : "",
        TOOLS_HEADER,
        nemotronToolDeclarations(tools, this.options.asciiDeclarations),
        XML_CALL_INSTRUCTIONS,
      );
    }
    parts.push("<|im_end|>\n");
    let lastUser = -1;
    msgs.forEach((m, i) => {
      if (m.role === "user") lastUser = i;
    });
    msgs.forEach((m, i) => {
      switch (m.role) {
        case "system":
          if (i > 0) parts.push("<|im_start|>system\n", m.content, "<|im_end|>\n");
          break;
        case "user":
          parts.push("<|im_start|>user\n", m.content, "<|im_end|>\n");
          break;
        case "assistant": {
          const keep = !this.options.truncateHistoryThinking || i >= lastUser;
          parts.push("<|im_start|>assistant\n", this.assistantBody(m, keep), "<|im_end|>\n");
          break;
        }
        case "tool":
          if (msgs[i - 1]?.role !== "tool") parts.push("<|im_start|>user\n");
          parts.push("<tool_response>\n", m.content, "\n</tool_response>\n");
          if (msgs[i + 1]?.role !== "tool") parts.push("<|im_end|>\n");
          break;
      }
    });
    if (addGenerationPrompt) parts.push("<|im_start|>assistant\n", this.generationTail);
    return parts.join("");
  }
}
