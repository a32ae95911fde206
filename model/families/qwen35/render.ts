/**
 * The prompt text of Qwen3.5 and Qwen3.6, written from their chat format (ChatML, `<think>`
 * reasoning, XML tool calls, tools listed as JSON in the system turn):
 *
 * - With tools, the first turn is a system turn: the tools header, one `json.dumps(tool)` line
 *   per tool, the call-format instructions, then (after a blank line) the system message if any.
 *   Without tools, a first system message is a system turn of its own.
 * - Every message's text is trimmed (Python `str.strip`). User turns: `<|im_start|>user\n…`.
 * - An assistant turn after the last user query (or any, with Qwen3.6's `preserve_thinking`)
 *   carries `<think>\nREASONING\n</think>\n\n` before its content; earlier ones lose it.
 * - Tool calls follow the content (after a blank line when there is content; one newline between
 *   calls), each `<tool_call>\n<function=NAME>\n` + one `<parameter=KEY>\nVALUE\n</parameter>\n`
 *   per argument + `</function>\n</tool_call>`. VALUE is the string itself for strings; other
 *   values are `json.dumps` for Qwen3.6 and for containers, Python `str()` for Qwen3.5 scalars
 *   (`True`, `None`, `1.0`).
 * - Consecutive tool results share one `<|im_start|>user` turn, each
 *   `\n<tool_response>\nOUTPUT\n</tool_response>`.
 * - Generation prompt: `<|im_start|>assistant\n<think>\n`, or with thinking off
 *   `<|im_start|>assistant\n<think>\n\n</think>\n\n`.
 *
 * Qwen3.8 (`qwen38`): its `reasoning_effort` instruction opens the system turn (before the tools
 * header, or before the system message after a blank line, or alone), an empty system message
 * renders nothing, and reasoning comes only from `reasoning_content`.
 *
 * One deliberate difference: the model's template refuses a system message after the first
 * message; agents send them (harness reminders), so one is rendered in place as a system turn.
 *
 * @module
 */
import type { Message, ToolCall, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { type JsonValue, tryParseOrderedJson } from "../ordered_json.ts";
import { pythonJsonDumps, pythonScalarStr, pythonStrip } from "../../python_json.ts";
import type { TextRenderer } from "../text_renderer.ts";

export interface Qwen35Options {
  /** How non-string argument values are written: Python `str()` (3.5) or JSON (3.6). */
  argumentValues: "python" | "json";
  /** `enable_thinking` (default true): the generation prompt opens reasoning. */
  enableThinking: boolean;
  /** Qwen3.6's `preserve_thinking`: every assistant turn keeps its reasoning. */
  preserveThinking: boolean;
  /**
   * Qwen3.8: text the template writes at the start of the system turn (its `reasoning_effort`
   * instruction), making a system turn of its own when there is none; an empty system message
   * then renders nothing; reasoning comes only from `reasoning_content` (no inline `</think>`).
   */
  qwen38?: { reasoningInstructions: string };
}

const TOOLS_HEADER = "# Tools\n\nYou have access to the following functions:\n\n<tools>";
/**
 * The format instructions the Qwen3.5/3.6 template puts after the tool list (Nemotron 3's too):
 * the model was trained on exactly this text.
 */
export const XML_CALL_INSTRUCTIONS = "\n</tools>" +
  "\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:" +
  "\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>" +
  "\nvalue_1\n</parameter>\n<parameter=example_parameter_2>" +
  "\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>" +
  "\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:" +
  "\n- Function calls MUST follow the specified format: an inner <function=...></function> " +
  "block must be nested within <tool_call></tool_call> XML tags" +
  "\n- Required parameters MUST be specified" +
  "\n- You may provide optional reasoning for your function call in natural language BEFORE " +
  "the function call, but NOT after" +
  "\n- If there is no function call available, answer the question like normal with your " +
  "current knowledge and do not tell the user about function calls\n</IMPORTANT>";

function isToolResponseWrapper(content: string): boolean {
  const c = pythonStrip(content);
  return c.startsWith("<tool_response>") && c.endsWith("</tool_response>");
}

/** Reasoning and content of an assistant message as the template reads them. */
function assistantParts(
  m: TemplateMessage,
  inlineThink: boolean,
): { reasoning: string; content: string } {
  let content = pythonStrip(m.content);
  let reasoning = "";
  if (typeof m.reasoning_content === "string") {
    reasoning = m.reasoning_content;
  } else if (inlineThink && content.includes("</think>")) {
    const parts = content.split("</think>");
    reasoning = parts[0].replace(/\n+$/, "").split("<think>").at(-1)!.replace(/^\n+/, "");
    content = parts.at(-1)!.replace(/^\n+/, "");
  }
  return { reasoning: pythonStrip(reasoning), content };
}

/**
 * The `<tool_call>…</tool_call>` block of one XML call (arguments that are no JSON object: no
 * parameters): strings raw, other values JSON (`json`) or Python's `str()` with containers as JSON
 * (`python`). Qwen3.5/3.6/3.8, Nemotron 3 and Prime-Qwen3 write calls this way.
 */
export function xmlToolCall(
  call: { name: string; arguments: ToolCall["arguments"] },
  values: "python" | "json",
): string {
  let text = `<tool_call>\n<function=${call.name}>\n`;
  const args = tryParseOrderedJson(call.arguments);
  if (args instanceof Map) {
    for (const [key, value] of args) {
      text += `<parameter=${key}>\n${argumentValue(value, values)}\n</parameter>\n`;
    }
  }
  return text + "</function>\n</tool_call>";
}

function argumentValue(value: JsonValue, values: "python" | "json"): string {
  if (typeof value === "string") return value;
  return values === "json" ? pythonJsonDumps(value) : pythonScalarStr(value);
}

export class Qwen35TextRenderer implements TextRenderer {
  constructor(readonly options: Qwen35Options) {}

  /** The `<tool_call>…</tool_call>` block of one call. */
  toolCall(call: { name: string; arguments: ToolCall["arguments"] }): string {
    return xmlToolCall(call, this.options.argumentValues);
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const parts: string[] = [];
    const first = msgs[0]?.role === "system" ? pythonStrip(msgs[0].content) : null;
    const instructions = this.options.qwen38?.reasoningInstructions ?? "";
    if (tools.length > 0) {
      parts.push("<|im_start|>system\n");
      if (instructions) parts.push(instructions, "\n\n");
      parts.push(TOOLS_HEADER);
      for (const tool of toTemplateTools(tools)) parts.push("\n", pythonJsonDumps(tool));
      parts.push(XML_CALL_INSTRUCTIONS);
      if (first) parts.push("\n\n", first);
      parts.push("<|im_end|>\n");
    } else if (first || instructions || (first !== null && !this.options.qwen38)) {
      const separator = instructions && first ? "\n\n" : "";
      parts.push("<|im_start|>system\n", instructions, separator, first ?? "", "<|im_end|>\n");
    }
    let lastQuery = msgs.length;
    for (let i = msgs.length - 1; i >= 0; i--) {
      if (msgs[i].role === "user" && !isToolResponseWrapper(msgs[i].content)) {
        lastQuery = i;
        break;
      }
    }
    msgs.forEach((m, i) => {
      switch (m.role) {
        case "system":
          if (i > 0) parts.push("<|im_start|>system\n", pythonStrip(m.content), "<|im_end|>\n");
          break;
        case "user":
          parts.push("<|im_start|>user\n", pythonStrip(m.content), "<|im_end|>\n");
          break;
        case "assistant": {
          const { reasoning, content } = assistantParts(m, !this.options.qwen38);
          parts.push("<|im_start|>assistant\n");
          if (this.options.preserveThinking || i > lastQuery) {
            parts.push("<think>\n", reasoning, "\n</think>\n\n");
          }
          parts.push(content);
          (m.tool_calls ?? []).forEach((c, k) => {
            if (k > 0) parts.push("\n");
            else if (pythonStrip(content)) parts.push("\n\n");
            parts.push(this.toolCall(c.function));
          });
          parts.push("<|im_end|>\n");
          break;
        }
        case "tool":
          if (i > 0 && msgs[i - 1].role !== "tool") parts.push("<|im_start|>user");
          parts.push("\n<tool_response>\n", pythonStrip(m.content), "\n</tool_response>");
          if (msgs[i + 1]?.role !== "tool") parts.push("<|im_end|>\n");
          break;
      }
    });
    if (addGenerationPrompt) {
      parts.push(
        "<|im_start|>assistant\n",
        this.options.enableThinking ? "<think>\n" : "<think>\n\n</think>\n\n",
      );
    }
    return parts.join("");
  }
}
