/**
 * The prompt text of Llama 3.1 / 3.2 Instruct, written from the chat format of their template
 * (JSON tool calls, tools in the first user message by default):
 *
 * - `<|begin_of_text|>`, then always a system turn:
 *   `<|start_header_id|>system<|end_header_id|>\n\n` + (with tools) `Environment: ipython\n` +
 *   `Cutting Knowledge Date: December 2023\nToday Date: DATE\n\n` + (tools in the system turn) the
 *   call instructions and one `json.dumps(tool, indent=4)` + blank line per tool + the system text
 *   trimmed + `<|eot_id|>`.
 * - With tools (default `tools_in_user_message`), the first user turn opens with the call
 *   instructions and the tool list before its text (trimmed).
 * - Turns: `<|start_header_id|>ROLE<|end_header_id|>\n\n` + the text trimmed + `<|eot_id|>`; a later
 *   system message in place. A tool result is an `ipython` turn whose body is the output as a
 *   JSON string (the template's `tojson`). An assistant turn with a call is only
 *   `{"name": "NAME", "parameters": ARGUMENTS}` (its text is not written; the template takes one
 *   call per turn, and several are refused).
 * - Generation prompt: `<|start_header_id|>assistant<|end_header_id|>\n\n`.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { pythonJsonDumps, pythonStrip } from "../../python_json.ts";
import { FamilyError } from "../family.ts";
import type { TextRenderer } from "../text_renderer.ts";

// The template's instructions, written exactly (two of its literals run on without a space).
const FORMAT = 'Respond in the format {"name": function name, "parameters": dictionary of ' +
  "argument name and its value}.Do not use variables.\n\n";
const TOOLS_IN_SYSTEM = "You have access to the following functions. To call a function, " +
  "please respond with JSON for a function call." + FORMAT;
const TOOLS_IN_USER = "Given the following functions, please respond with a JSON for a " +
  "function call with its proper arguments that best answers the given prompt.\n\n" + FORMAT;

export interface Llama3Options {
  /** `date_string`: the system turn's `Today Date` (default the template's `26 Jul 2024`). */
  dateString: string;
  /** `tools_in_user_message` (default true): tools open the first user turn, else the system's. */
  toolsInUserMessage: boolean;
}

const header = (role: string) => `<|start_header_id|>${role}<|end_header_id|>\n\n`;

export class Llama3TextRenderer implements TextRenderer {
  constructor(readonly options: Llama3Options) {}

  /** An assistant turn's body: the call's JSON, or the text trimmed. */
  assistantBody(m: TemplateMessage): string {
    const calls = m.tool_calls ?? [];
    if (calls.length > 1) {
      throw new FamilyError(
        "llama-3: the model's template takes one tool call per assistant message, " +
          `got ${calls.length}`,
      );
    }
    if (calls.length === 0) return pythonStrip(m.content);
    const c = calls[0].function;
    return `{"name": "${c.name}", "parameters": ${c.arguments}}`;
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const first = msgs[0]?.role === "system" ? 1 : 0;
    const list = toTemplateTools(tools).map((t) => pythonJsonDumps(t, { indent: 4 }) + "\n\n")
      .join("");
    const withTools = tools.length > 0;
    const inUser = withTools && this.options.toolsInUserMessage;
    const parts = [
      "<|begin_of_text|>",
      header("system"),
      withTools ? "Environment: ipython\n" : "",
      `Cutting Knowledge Date: December 2023\nToday Date: ${this.options.dateString}\n\n`,
      withTools && !inUser ? TOOLS_IN_SYSTEM + list : "",
      first ? pythonStrip(msgs[0].content) : "",
      "<|eot_id|>",
    ];
    for (const [i, m] of msgs.entries()) {
      if (i < first) continue;
      if (inUser && i === first) {
        if (m.role !== "user") {
          throw new FamilyError(
            "llama-3: with tools the first message after the system " +
              `message must be a user message (the template writes the tools there), got ${m.role}`,
          );
        }
        parts.push(header("user"), TOOLS_IN_USER, list, pythonStrip(m.content), "<|eot_id|>");
        continue;
      }
      switch (m.role) {
        case "tool":
          parts.push(header("ipython"), pythonJsonDumps(m.content), "<|eot_id|>");
          break;
        case "assistant":
          parts.push(header("assistant"), this.assistantBody(m), "<|eot_id|>");
          break;
        default:
          parts.push(header(m.role), pythonStrip(m.content), "<|eot_id|>");
      }
    }
    if (addGenerationPrompt) parts.push(header("assistant"));
    return parts.join("");
  }

  /** What the policy writes for `message`: its turn's body, `<|eot_id|>` included. */
  answer(message: AssistantMessage): string {
    return this.assistantBody(toTemplateMessages([message])[0]) + "<|eot_id|>";
  }
}
