/**
 * The prompt text of Poolside's Laguna 2.1 models (Laguna-XS-2.1, Laguna-S-2.1), written from
 * their chat format:
 *
 * - `〈|EOS|〉` once, then a system block `<system>SYSTEM</system>\n`: the first system message
 *   (right-trimmed) or Poolside's default one, then (with tools) `\n\n### Tools\n\n…
 *   <available_tools>\n` with one `json.dumps` line per tool and `</available_tools>`. An empty
 *   system message opts out of the default; the block is left out only when it would hold
 *   nothing and thinking is off.
 * - Messages hug their tags, each followed by a newline: `<user>TEXT</user>\n`,
 *   `<tool_response>OUTPUT</tool_response>\n`, a later system message `<system>TEXT</system>\n`,
 *   and the assistant `<assistant><think>REASONING</think>CONTENT` + per call
 *   `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>` + `</assistant>\n`.
 *   With thinking off (and, on S-2.1, `preserve_thinking` off) a turn opens with a bare
 *   `</think>` and its reasoning is not written. Text is verbatim; a string value is raw, any
 *   other `json.dumps`.
 * - Generation prompt: `<assistant><think>` (thinking) or `<assistant></think>`. `<assistant>`,
 *   `</assistant>`, `<think>`, `</think>`, `<tool_call>` and `</tool_call>` are tokens; the other
 *   tags are text.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { pythonJsonDumps, pythonRstrip, pythonStrip } from "../../python_json.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** Poolside's system message when a conversation has none. */
export const LAGUNA_DEFAULT_SYSTEM =
  "You are a helpful, conversationally-fluent assistant made by Poolside. You are here to be " +
  "helpful to users through natural language conversations.";

const TOOLS_HEADER = "### Tools\n\nYou may call functions to assist with the user query.\n" +
  "All available function signatures are listed below:\n<available_tools>\n";

export interface LagunaOptions {
  /** `enable_thinking`: the generation prompt opens `<think>` and turns show their reasoning. */
  enableThinking: boolean;
  /** `preserve_thinking` (S-2.1): turns show their reasoning even with thinking off. */
  preserveThinking: boolean;
}

/** One `<tool_call>` block (arguments that are no JSON object: none). */
function toolCall(name: string, args: string): string {
  let text = `<tool_call>${name}`;
  const parsed = tryParseOrderedJson(args);
  if (parsed instanceof Map) {
    for (const [key, value] of parsed) {
      const v = typeof value === "string" ? value : pythonJsonDumps(value);
      text += `<arg_key>${key}</arg_key><arg_value>${v}</arg_value>`;
    }
  }
  return text + "</tool_call>";
}

function answerBody(m: TemplateMessage): string {
  const calls = (m.tool_calls ?? []).map((c) => toolCall(c.function.name, c.function.arguments));
  return m.content + calls.join("") + "</assistant>";
}

export class LagunaTextRenderer implements TextRenderer {
  constructor(readonly options: LagunaOptions) {}

  get #showsReasoning(): boolean {
    return this.options.enableThinking || this.options.preserveThinking;
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const first = msgs[0]?.role === "system" ? 1 : 0;
    const system = first ? msgs[0].content : LAGUNA_DEFAULT_SYSTEM;
    const hasSystem = pythonStrip(system) !== "";
    const parts = ["〈|EOS|〉"];
    if (hasSystem || tools.length > 0 || this.options.enableThinking) {
      parts.push("<system>");
      if (hasSystem) parts.push(pythonRstrip(system), tools.length > 0 ? "\n\n" : "");
      if (tools.length > 0) {
        parts.push(TOOLS_HEADER);
        for (const t of toTemplateTools(tools)) parts.push(pythonJsonDumps(t), "\n");
        parts.push("</available_tools>");
      }
      parts.push("</system>\n");
    }
    for (const m of msgs.slice(first)) {
      switch (m.role) {
        case "system":
        case "user":
          parts.push(`<${m.role}>`, m.content, `</${m.role}>\n`);
          break;
        case "tool":
          parts.push("<tool_response>", m.content, "</tool_response>\n");
          break;
        case "assistant":
          parts.push(
            "<assistant>",
            this.#showsReasoning ? `<think>${m.reasoning_content ?? ""}</think>` : "</think>",
            answerBody(m),
            "\n",
          );
          break;
      }
    }
    if (addGenerationPrompt) {
      parts.push("<assistant>", this.options.enableThinking ? "<think>" : "</think>");
    }
    return parts.join("");
  }

  /**
   * What the policy writes after the generation prompt for `message`, through `</assistant>`:
   * with thinking, its reasoning and `</think>` (the prompt opened `<think>`); then the content
   * and calls.
   */
  answer(message: AssistantMessage): string {
    const m = toTemplateMessages([message])[0];
    const reasoning = this.options.enableThinking ? `${m.reasoning_content ?? ""}</think>` : "";
    return reasoning + answerBody(m);
  }
}
