/**
 * The prompt text of Kimi K2, written from its chat format:
 *
 * - Every message is `<|im_ROLE|>NAME<|im_middle|>CONTENT<|im_end|>` with nothing between
 *   messages: `<|im_system|>system`, `<|im_user|>user`, `<|im_assistant|>assistant`, and a tool
 *   result `<|im_system|>TOOL_NAME<|im_middle|>## Return of CALL_ID\nOUTPUT` (`tool` when the
 *   message carries no name). Text is rendered verbatim (no trimming).
 * - Tools come first, as `<|im_system|>tool_declare<|im_middle|>` + the tool list as compact JSON
 *   with sorted keys; a conversation that does not start with a system message gets the default
 *   one (`You are Kimi, …`), followed by a newline.
 * - An assistant turn is its content, then (with calls)
 *   `<|tool_calls_section_begin|>` + `<|tool_call_begin|>ID<|tool_call_argument_begin|>ARGS
 *   <|tool_call_end|>` per call + `<|tool_calls_section_end|>`; ID is the call's id as the policy
 *   wrote it (`functions.NAME:INDEX`, which is where the name is read back from) and ARGS the
 *   arguments JSON verbatim (a call without an id gets `functions.NAME:I`, I its place in the
 *   message). K2 has no reasoning: `reasoning_content` is not rendered.
 * - Generation prompt: `<|im_assistant|>assistant<|im_middle|>`.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../../canonical/mod.ts";
import { pythonJsonDumps } from "../../python_json.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** The system message the template adds when a conversation has none. */
export const KIMI_DEFAULT_SYSTEM = "You are Kimi, an AI assistant created by Moonshot AI.";

/** An assistant message's calls as Kimi writes them after its content ("" without calls). */
export function kimiToolCallsSection(m: TemplateMessage): string {
  const calls = m.tool_calls ?? [];
  if (calls.length === 0) return "";
  const parts = ["<|tool_calls_section_begin|>"];
  for (const [i, c] of calls.entries()) {
    parts.push(
      "<|tool_call_begin|>",
      // A call written without an id (a scripted policy's answer) gets the id a Kimi policy
      // samples: the name is read back from it.
      c.id || `functions.${c.function.name}:${i}`,
      "<|tool_call_argument_begin|>",
      c.function.arguments,
      "<|tool_call_end|>",
    );
  }
  parts.push("<|tool_calls_section_end|>");
  return parts.join("");
}

export class KimiK2TextRenderer implements TextRenderer {
  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const parts: string[] = [];
    if (tools.length > 0) {
      const list = pythonJsonDumps(toTemplateTools(tools), {
        separators: [",", ":"],
        sortKeys: true,
      });
      parts.push("<|im_system|>tool_declare<|im_middle|>", list, "<|im_end|>");
    }
    if (msgs[0]?.role !== "system") {
      parts.push(`<|im_system|>system<|im_middle|>${KIMI_DEFAULT_SYSTEM}<|im_end|>\n`);
    }
    for (const m of msgs) {
      switch (m.role) {
        case "system":
        case "user":
          parts.push(`<|im_${m.role}|>${m.role}<|im_middle|>`, m.content, "<|im_end|>");
          break;
        case "assistant": {
          parts.push("<|im_assistant|>assistant<|im_middle|>", m.content);
          parts.push(kimiToolCallsSection(m), "<|im_end|>");
          break;
        }
        case "tool":
          parts.push(
            `<|im_system|>${m.name || "tool"}<|im_middle|>## Return of ${m.tool_call_id ?? ""}\n`,
            m.content,
            "<|im_end|>",
          );
          break;
      }
    }
    if (addGenerationPrompt) parts.push("<|im_assistant|>assistant<|im_middle|>");
    return parts.join("");
  }
}
