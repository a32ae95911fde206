/**
 * The prompt text of Kimi K2.5 / K2.6, written from its chat format (Kimi K2's, with reasoning):
 *
 * - Tools first, as `<|im_system|>tool_declare<|im_middle|>` + TypeScript-style declarations
 *   (`tool_declarations.ts`) + `<|im_end|>`. No default system message.
 * - Every message is `<|im_ROLE|>NAME<|im_middle|>BODY<|im_end|>`, nothing between messages:
 *   `<|im_user|>user`, `<|im_assistant|>assistant`, `<|im_system|>system`, and a tool result
 *   `<|im_system|>NAME` (`tool` without a name) with the body `## Return of CALL_ID\nOUTPUT`.
 * - An assistant body is `<think>REASONING</think>` + content + (with calls)
 *   `<|tool_calls_section_begin|>` + `<|tool_call_begin|>ID<|tool_call_argument_begin|>ARGS
 *   <|tool_call_end|>` per call + `<|tool_calls_section_end|>`, text verbatim. The call id is the
 *   policy's own (`functions.NAME:INDEX`), rendered as sampled. Reasoning shows only in the turns
 *   after the last assistant message without calls (the last final answer); earlier turns are
 *   written `<think></think>` (K2.5 always; K2.6 keeps it all with `preserve_thinking`).
 * - `<think>` and `</think>` are text in Kimi's vocabulary, not added tokens.
 * - Generation prompt: `<|im_assistant|>assistant<|im_middle|><think>` (`thinking`, the default)
 *   or `…<think></think>`.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages } from "../../template_input.ts";
import type { TextRenderer } from "../text_renderer.ts";
import { kimiToolCallsSection } from "../kimi_k2/mod.ts";
import { kimiToolDeclarations } from "./tool_declarations.ts";

export interface KimiK25Options {
  /** `thinking` (default true): the generation prompt opens `<think>` (else `<think></think>`). */
  thinking: boolean;
  /** `preserve_thinking` (K2.6, default false): every turn keeps its reasoning. */
  preserveThinking: boolean;
}

/** Reasoning and content of an assistant message as the template reads them. */
function assistantParts(m: TemplateMessage): { reasoning: string; content: string } {
  if (typeof m.reasoning_content === "string") {
    return { reasoning: m.reasoning_content, content: m.content };
  }
  const at = m.content.indexOf("</think>");
  if (at < 0) return { reasoning: "", content: m.content };
  const before = m.content.slice(0, at);
  const open = before.indexOf("<think>");
  return {
    reasoning: open < 0 ? before : before.slice(open + 7),
    content: m.content.slice(at + 8).replace(/^\n+/, ""),
  };
}

/** Content and calls of an assistant turn (after its think block), through `<|im_end|>`. */
function answerBody(m: TemplateMessage, content: string): string {
  return content + kimiToolCallsSection(m) + "<|im_end|>";
}

export class KimiK25TextRenderer implements TextRenderer {
  constructor(readonly options: KimiK25Options) {}

  /** What the generation prompt adds after `<|im_middle|>`. */
  get generationTail(): string {
    return this.options.thinking ? "<think>" : "<think></think>";
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const parts: string[] = [];
    if (tools.length > 0) {
      parts.push(
        "<|im_system|>tool_declare<|im_middle|>",
        kimiToolDeclarations(tools),
        "<|im_end|>",
      );
    }
    let lastFinal = -1;
    if (!this.options.preserveThinking) {
      msgs.forEach((m, i) => {
        if (m.role === "assistant" && !m.tool_calls?.length) lastFinal = i;
      });
    }
    msgs.forEach((m, i) => {
      const tag = m.role === "user" ? "user" : m.role === "assistant" ? "assistant" : "system";
      parts.push(`<|im_${tag}|>${m.name || m.role}<|im_middle|>`);
      if (m.role === "assistant") {
        const { reasoning, content } = assistantParts(m);
        parts.push(i > lastFinal ? `<think>${reasoning}</think>` : "<think></think>");
        parts.push(answerBody(m, content));
        return;
      }
      if (m.role === "tool") parts.push(`## Return of ${m.tool_call_id ?? ""}\n`);
      parts.push(m.content, "<|im_end|>");
    });
    if (addGenerationPrompt) {
      parts.push("<|im_assistant|>assistant<|im_middle|>", this.generationTail);
    }
    return parts.join("");
  }

  /**
   * What the policy writes after the generation prompt for `message`, through `<|im_end|>`: with
   * thinking, its reasoning (empty too) and `</think>` (the prompt opened `<think>`); then the
   * content and calls.
   */
  answer(message: AssistantMessage): string {
    const m = toTemplateMessages([message])[0];
    const { reasoning, content } = assistantParts(m);
    return (this.options.thinking ? `${reasoning}</think>` : "") + answerBody(m, content);
  }
}
