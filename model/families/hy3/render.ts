/**
 * The prompt text of Tencent Hunyuan Hy3, written from its chat format (every marker an added
 * token with the `:opensource` suffix, `HY3`):
 *
 * - `<｜hy_begin_of_sentence｜>`, then the system text (the system messages' texts run together),
 *   then with tools (after a blank line when there is system text) the tools block — a
 *   `json.dumps` line per tool, the call instructions, `<｜reasoning_mode｜>reasoning_effort:EFFORT`
 *   at its end — or without tools `<｜reasoning_mode｜>reasoning_effort:EFFORT` alone.
 * - A user message: `<｜hy_User｜>` + its text. A later system message is rendered in place the
 *   same way (the template would hoist it into the header, which no earlier prompt had).
 * - An assistant message: `<｜hy_Assistant｜><think>` + its reasoning (kept when
 *   `preserved_thinking`, which defaults to whether the conversation has tools, or when it comes
 *   after the last user message) + `</think>` + its text verbatim, then its calls as
 *   `<tool_calls>\n` + per call `<tool_call>NAME<tool_sep>\n` + per argument
 *   `<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n` (strings raw, other values `json.dumps`) +
 *   `</tool_call>\n` + `</tool_calls>`, then `<｜hy_eos｜>` (a last message without calls ends
 *   open, as the template leaves it).
 * - Tool results after a turn's calls: `<tool_responses>\n` + per result
 *   `<tool_response>\nOUTPUT\n</tool_response>\n` + `</tool_responses>` before what follows.
 * - Generation prompt: `<｜hy_Assistant｜><think>`, closed `</think>` at once with
 *   `reasoning_effort` `no_think` (the default).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { pythonJsonDumps } from "../../python_json.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import type { TextRenderer } from "../text_renderer.ts";

const tag = (name: string) => `<${name}:opensource>`;
const bar = (name: string) => `<｜${name}:opensource｜>`;

/** Hy3's added tokens (the template builds each as `'<…{}…>'.format(':opensource')`). */
export const HY3 = {
  bos: bar("hy_begin_of_sentence"),
  eos: bar("hy_eos"),
  user: bar("hy_User"),
  assistant: bar("hy_Assistant"),
  reasoningMode: bar("reasoning_mode"),
  think: tag("think"),
  thinkEnd: tag("/think"),
  toolCalls: tag("tool_calls"),
  toolCallsEnd: tag("/tool_calls"),
  toolCall: tag("tool_call"),
  toolCallEnd: tag("/tool_call"),
  toolSep: tag("tool_sep"),
  argKey: tag("arg_key"),
  argKeyEnd: tag("/arg_key"),
  argValue: tag("arg_value"),
  argValueEnd: tag("/arg_value"),
  toolResponses: tag("tool_responses"),
  toolResponsesEnd: tag("/tool_responses"),
  toolResponse: tag("tool_response"),
  toolResponseEnd: tag("/tool_response"),
} as const;

export type Hy3Effort = "no_think" | "low" | "high";

export interface Hy3Options {
  reasoningEffort: Hy3Effort;
  /** `preserved_thinking`; undefined: the template's default, whether there are tools. */
  preservedThinking?: boolean;
  /** Every system message hoisted into the header, as the template does (test reference only). */
  hoistSystem?: boolean;
}

/** The tools block of the header (the model was trained on exactly this text). */
function toolsBlock(tools: readonly ToolSpec[], afterSystem: boolean, effort: string): string {
  const list = toTemplateTools(tools).map((t) => pythonJsonDumps(t)).join("\n");
  return (afterSystem ? "\n\n" : "") +
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
    list + "\n</tools>\n\n" +
    `For function call returns, you should first print ${HY3.toolCalls}\n` +
    "For each function call, you should return object like:\n" +
    `${HY3.toolCall}{function-name}${HY3.toolSep}\n` +
    `${HY3.argKey}{arg-key-1}${HY3.argKeyEnd}\n${HY3.argValue}{arg-value-1}${HY3.argValueEnd}\n` +
    `${HY3.argKey}{arg-key-2}${HY3.argKeyEnd}\n${HY3.argValue}{arg-value-2}${HY3.argValueEnd}\n` +
    `...\n${HY3.toolCallEnd}\n` +
    `At the end of function call returns, you should print ${HY3.toolCallsEnd}` +
    `${HY3.reasoningMode}reasoning_effort:${effort}`;
}

/** One call as history writes it. */
function toolCall(name: string, args: string): string {
  let text = `${HY3.toolCall}${name}${HY3.toolSep}\n`;
  const parsed = tryParseOrderedJson(args);
  if (parsed instanceof Map) {
    for (const [key, value] of parsed) {
      const v = typeof value === "string" ? value : pythonJsonDumps(value);
      text += `${HY3.argKey}${key}${HY3.argKeyEnd}\n${HY3.argValue}${v}${HY3.argValueEnd}\n`;
    }
  }
  return text + HY3.toolCallEnd + "\n";
}

export class Hy3TextRenderer implements TextRenderer {
  constructor(readonly options: Hy3Options) {}

  /** Whether the policy writes its own `</think>` (the prompt left `<think>` open). */
  get thinks(): boolean {
    return this.options.reasoningEffort !== "no_think";
  }

  /** Text and calls after `</think>`, `<｜hy_eos｜>` included unless `open`. */
  body(m: TemplateMessage, open = false): string {
    const calls = m.tool_calls ?? [];
    if (calls.length === 0) return m.content + (open ? "" : HY3.eos);
    return m.content + HY3.toolCalls + "\n" +
      calls.map((c) => toolCall(c.function.name, c.function.arguments)).join("") +
      HY3.toolCallsEnd + HY3.eos;
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const effort = this.options.reasoningEffort;
    const preserved = this.options.preservedThinking ?? tools.length > 0;
    let lead = 0;
    while (msgs[lead]?.role === "system") lead++;
    const systems = this.options.hoistSystem ? msgs.filter((m) => m.role === "system") : msgs
      .slice(0, lead);
    const system = systems.map((m) => m.content).join("");
    const parts = [HY3.bos, system];
    parts.push(
      tools.length > 0
        ? toolsBlock(tools, system !== "", effort)
        : `${HY3.reasoningMode}reasoning_effort:${effort}`,
    );
    let lastUser = -1;
    msgs.forEach((m, i) => {
      if (m.role === "user") lastUser = i;
    });
    let inResults = false, firstResult = true;
    const closeResults = () => {
      if (inResults) parts.push(HY3.toolResponsesEnd);
      inResults = false;
    };
    for (const [i, m] of msgs.entries()) {
      switch (m.role) {
        case "system":
          if (i < lead || this.options.hoistSystem) break;
          closeResults();
          parts.push(HY3.user, m.content);
          break;
        case "user":
          closeResults();
          parts.push(HY3.user, m.content);
          break;
        case "assistant": {
          closeResults();
          const keep = preserved || i > lastUser;
          const reasoning = keep ? m.reasoning_content ?? "" : "";
          parts.push(HY3.assistant, HY3.think, reasoning, HY3.thinkEnd);
          parts.push(this.body(m, i === msgs.length - 1));
          if (m.tool_calls?.length) firstResult = true;
          break;
        }
        case "tool":
          if (firstResult) parts.push(HY3.toolResponses, "\n");
          firstResult = false;
          inResults = true;
          parts.push(HY3.toolResponse, "\n", m.content, "\n", HY3.toolResponseEnd, "\n");
          break;
      }
    }
    closeResults();
    if (addGenerationPrompt && msgs.at(-1)?.role !== "assistant") {
      parts.push(HY3.assistant, HY3.think, this.thinks ? "" : HY3.thinkEnd);
    }
    return parts.join("");
  }

  /** What the policy writes for `message` after the generation prompt, `<｜hy_eos｜>` included. */
  answer(message: AssistantMessage): string {
    const [m] = toTemplateMessages([message]);
    const reasoning = this.thinks ? (m.reasoning_content ?? "") + HY3.thinkEnd : "";
    return reasoning + this.body(m);
  }
}
