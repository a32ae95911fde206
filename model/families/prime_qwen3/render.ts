/**
 * The prompt text of PrimeIntellect's Qwen3 (Qwen3-0.6B, Qwen3-1.7B: Qwen3 fine-tuned to
 * Qwen3-Coder's XML calls), written from its chat format:
 *
 * - A system turn when there is a system message or tools: the system text (without one and with
 *   tools, Qwen3-Coder's default "You are Qwen, …"), then with tools the tools header, one XML
 *   `<function>` block per tool (`tool_declarations.ts`) and the call-format instructions.
 * - User text, a later system message and tool text verbatim; results as
 *   `<|im_start|>user\n<tool_response>\nOUTPUT\n</tool_response>\n…<|im_end|>\n`.
 * - An assistant message with calls: its text trimmed + a blank line (when there is any), then
 *   `<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>\n…</function>\n</tool_call>`
 *   per call, a newline between two; its reasoning is not written. Without calls: with reasoning
 *   (the key present, empty too) `<think>REASONING</think>` then a newline and the text, both
 *   trimmed; without, the text verbatim.
 * - Generation prompt: `<|im_start|>assistant\n` (the policy opens `<think>` itself, if at all).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages } from "../../template_input.ts";
import { pythonStrip } from "../../python_json.ts";
import type { TextRenderer } from "../text_renderer.ts";
import { XML_CALL_INSTRUCTIONS, xmlToolCall } from "../qwen35/mod.ts";
import { primeQwen3ToolDeclarations } from "./tool_declarations.ts";

// Qwen3-Coder's system text when tools come without a system message, and its tools header: the
// model was trained on exactly this text.
const DEFAULT_TOOL_SYSTEM =
  "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks.";
const TOOLS_HEADER = "\n\n# Tools\n\nYou have access to the following functions:\n\n<tools>";

export class PrimeQwen3TextRenderer implements TextRenderer {
  /** An assistant turn between `<|im_start|>assistant\n` and `<|im_end|>`. */
  assistantBody(m: TemplateMessage): string {
    const calls = m.tool_calls ?? [];
    if (calls.length > 0) {
      const text = pythonStrip(m.content);
      return (text ? text + "\n\n" : "") +
        calls.map((c) => xmlToolCall(c.function, "python")).join("\n");
    }
    if (m.reasoning_content === undefined) return m.content;
    const content = pythonStrip(m.content);
    return `<think>${pythonStrip(m.reasoning_content)}</think>` + (content ? "\n" + content : "");
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const first = msgs[0]?.role === "system" ? 1 : 0;
    const parts: string[] = [];
    if (first || tools.length > 0) {
      parts.push("<|im_start|>system\n", first ? msgs[0].content : DEFAULT_TOOL_SYSTEM);
      if (tools.length > 0) {
        parts.push(TOOLS_HEADER, primeQwen3ToolDeclarations(tools), XML_CALL_INSTRUCTIONS);
      }
      parts.push("<|im_end|>\n");
    }
    for (const [i, m] of msgs.entries()) {
      if (i < first) continue;
      switch (m.role) {
        case "assistant":
          parts.push("<|im_start|>assistant\n", this.assistantBody(m), "<|im_end|>\n");
          break;
        case "tool":
          if (msgs[i - 1]?.role !== "tool") parts.push("<|im_start|>user\n");
          parts.push("<tool_response>\n", m.content, "\n</tool_response>\n");
          if (msgs[i + 1]?.role !== "tool") parts.push("<|im_end|>\n");
          break;
        default:
          parts.push(`<|im_start|>${m.role}\n`, m.content, "<|im_end|>\n");
      }
    }
    if (addGenerationPrompt) parts.push("<|im_start|>assistant\n");
    return parts.join("");
  }

  /** What the policy writes for `message`: its turn as history writes it, `<|im_end|>` included. */
  answer(message: AssistantMessage): string {
    return this.assistantBody(toTemplateMessages([message])[0]) + "<|im_end|>";
  }
}
