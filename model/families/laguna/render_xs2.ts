/**
 * The prompt text of Poolside's first Laguna layout (Laguna-XS.2, Laguna-M.1): as the 2.1 layout
 * (`render.ts`) with a newline inside every tag and text trimmed:
 *
 * - `〈|EOS|〉`, then (when there is a system message or tools) `<system>\n\nSYSTEM` (right-trimmed;
 *   XS.2 puts Poolside's default one when the conversation has none, M.1 none), the tools
 *   (`\n\n### Tools\n\n…<available_tools>\n`, one `json.dumps` line per tool, then the call-format
 *   instructions, which also ask for `<think>` when thinking is on) and `\n</system>\n`.
 * - `<user>\nTEXT\n</user>\n`, `<tool_response>\nOUTPUT\n</tool_response>\n`, a later system
 *   message `<system>\nTEXT\n</system>\n`.
 * - The assistant: `<assistant>\n`, then `<think>\nREASONING\n</think>` (reasoning stripped; a
 *   turn without reasoning: a bare `</think>`), `\n`, the stripped content and `\n` (when any),
 *   then per call `<tool_call>NAME\n` + `<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n` per
 *   argument + `</tool_call>\n`, and `</assistant>\n`. Every turn keeps its reasoning.
 * - Generation prompt: `<assistant>\n<think>` (`enable_thinking`) or `<assistant>\n</think>`.
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { pythonJsonDumps, pythonRstrip, pythonStrip } from "../../python_json.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import type { TextRenderer } from "../text_renderer.ts";
import { LAGUNA_DEFAULT_SYSTEM } from "./render.ts";

const TOOLS_HEADER = "\n\n### Tools\n\nYou may call functions to assist with the user query.\n" +
  "All available function signatures are listed below:\n<available_tools>\n";
const CALL_FORMAT = "For each function call, return an unescaped XML-like object with function " +
  "name and arguments within '<tool_call>' and '</tool_call>' tags, like here:\n";
const CALL_EXAMPLE = "<tool_call>function-name\n<arg_key>argument-key</arg_key>\n" +
  "<arg_value>value-of-argument-key</arg_value>\n</tool_call>";
const FOOTER_THINKING = "</available_tools>\n\nWrap your thinking in '<think>', '</think>' tags, " +
  "followed by a function call. " + CALL_FORMAT + "<think> your thoughts here </think>\n" +
  CALL_EXAMPLE;
const FOOTER = "</available_tools>\n\n" + CALL_FORMAT + CALL_EXAMPLE;

export interface LagunaXs2Options {
  /** `enable_thinking` (default false). */
  enableThinking: boolean;
  /** M.1: no default system message. */
  defaultSystem: boolean;
}

function toolCall(name: string, args: string): string {
  let text = `<tool_call>${name}\n`;
  const parsed = tryParseOrderedJson(args);
  if (parsed instanceof Map) {
    for (const [key, value] of parsed) {
      const v = typeof value === "string" ? value : pythonJsonDumps(value);
      text += `<arg_key>${key}</arg_key>\n<arg_value>${v}</arg_value>\n`;
    }
  }
  return text + "</tool_call>\n";
}

/** After the think block: the content and the calls, through `</assistant>`. */
function answerBody(m: TemplateMessage): string {
  const content = pythonStrip(m.content);
  const calls = (m.tool_calls ?? []).map((c) => toolCall(c.function.name, c.function.arguments));
  return "\n" + (content ? content + "\n" : "") + calls.join("") + "</assistant>";
}

export class LagunaXs2TextRenderer implements TextRenderer {
  constructor(readonly options: LagunaXs2Options) {}

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const first = msgs[0]?.role === "system" ? 1 : 0;
    const system = first
      ? msgs[0].content
      : this.options.defaultSystem
      ? LAGUNA_DEFAULT_SYSTEM
      : "";
    const hasSystem = pythonStrip(system) !== "";
    const parts = ["〈|EOS|〉"];
    if (hasSystem || tools.length > 0) {
      parts.push(hasSystem ? "<system>\n\n" + pythonRstrip(system) : "<system>\n");
      if (tools.length > 0) {
        parts.push(TOOLS_HEADER);
        for (const t of toTemplateTools(tools)) parts.push(pythonJsonDumps(t), "\n");
        parts.push(this.options.enableThinking ? FOOTER_THINKING : FOOTER);
      }
      parts.push("\n</system>\n");
    }
    for (const m of msgs.slice(first)) {
      switch (m.role) {
        case "system":
        case "user":
          parts.push(`<${m.role}>\n`, m.content, `\n</${m.role}>\n`);
          break;
        case "tool":
          parts.push("<tool_response>\n", m.content, "\n</tool_response>\n");
          break;
        case "assistant": {
          const reasoning = m.reasoning_content ?? "";
          parts.push(
            "<assistant>\n",
            reasoning ? `<think>\n${pythonStrip(reasoning)}\n</think>` : "</think>",
            answerBody(m),
            "\n",
          );
          break;
        }
      }
    }
    if (addGenerationPrompt) {
      parts.push("<assistant>\n", this.options.enableThinking ? "<think>" : "</think>");
    }
    return parts.join("");
  }

  /**
   * What the policy writes after the generation prompt for `message`, through `</assistant>`:
   * with thinking, its reasoning between newlines and `</think>` (just `</think>` when it has
   * none); then the content and calls.
   */
  answer(message: AssistantMessage): string {
    const m = toTemplateMessages([message])[0];
    const reasoning = pythonStrip(m.reasoning_content ?? "");
    const think = !this.options.enableThinking
      ? ""
      : reasoning
      ? `\n${reasoning}\n</think>`
      : "</think>";
    return think + answerBody(m);
  }

  /** With thinking, history writes an answer without reasoning `</think>…`: no prompt `<think>`. */
  answerInPlace(message: AssistantMessage): { prompt: string; rendered: string } | null {
    const reasoning = pythonStrip(toTemplateMessages([message])[0].reasoning_content ?? "");
    if (!this.options.enableThinking || reasoning) return null;
    return { prompt: "<think>", rendered: this.answer(message) };
  }
}
