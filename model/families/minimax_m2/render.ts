/**
 * The prompt text of MiniMax M2 (M2, M2.5, M2.7), written from its chat format:
 *
 * - `]~!b[` once, then every message is `]~b]ROLE\nCONTENT[e~[\n`; the assistant's role is
 *   written `ai`. The system turn always comes first: the conversation's first system message,
 *   or the version's default identity (`model_identity`), then (with tools) the tool list, one
 *   `<tool>JSON</tool>` line per tool (`json.dumps` of its `function`, `ensure_ascii=False`), and
 *   the call-format instructions.
 * - An assistant turn: `<think>\nREASONING\n</think>\n\n` only for turns after the last user
 *   message (earlier reasoning leaves the prompt), the content, then (with calls)
 *   `\n<minimax:tool_call>\n` + per call `<invoke name="NAME">\n` + per argument
 *   `<parameter name="KEY">VALUE</parameter>\n` + `</invoke>\n`, then `</minimax:tool_call>`. A
 *   string value is written raw, any other `json.dumps` (Python spelling).
 * - Tool results: consecutive ones share one `]~b]tool` turn, each `\n<response>OUTPUT</response>`.
 * - Generation prompt: `]~b]ai\n<think>\n`: the policy writes its reasoning, `</think>`, the answer
 *   and `[e~[`; history writes `[e~[\n`, so the newline is the next prompt's (the delta starts
 *   with it).
 *
 * One departure from the model's template (and from `renderers`' full render): a system message
 * after the first message (a harness reminder) is rendered in place as a `]~b]system` turn; the
 * template drops it without a word (`renderers`' own bridge renders it as rollgate does).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { pythonJsonDumps } from "../../python_json.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** MiniMax-M2.5's default system identity (`renderers`' default; other versions read theirs). */
export const MINIMAX_M25_IDENTITY =
  "You are a helpful assistant. Your name is MiniMax-M2.5 and is built by MiniMax.";

const TOOLS_HEADER =
  "\n\n# Tools\nYou may call one or more tools to assist with the user query.\n" +
  "Here are the tools available in JSONSchema format:\n\n<tools>\n";
// The call-format instructions after the tool list: the model was trained on exactly this text.
const TOOLS_FOOTER =
  "</tools>\n\nWhen making tool calls, use XML format to invoke tools and pass " +
  'parameters:\n\n<minimax:tool_call>\n<invoke name="tool-name-1">\n' +
  '<parameter name="param-key-1">param-value-1</parameter>\n' +
  '<parameter name="param-key-2">param-value-2</parameter>\n...\n</invoke>\n</minimax:tool_call>';

/** The generation prompt's text after the last message. */
export const MINIMAX_GENERATION_PROMPT = "]~b]ai\n<think>\n";

/** Reasoning and content of an assistant message as the template reads them. */
function assistantParts(m: TemplateMessage): { reasoning: string; content: string } {
  if (typeof m.reasoning_content === "string") {
    return { reasoning: m.reasoning_content, content: m.content };
  }
  const at = m.content.indexOf("</think>");
  if (at < 0) return { reasoning: "", content: m.content };
  return {
    reasoning: m.content.slice(0, at).replace(/\n+$/, "").split("<think>").at(-1)!
      .replace(/^\n+/, ""),
    content: m.content.slice(m.content.lastIndexOf("</think>") + 8).replace(/^\n+|\n+$/g, ""),
  };
}

/** One `<invoke>` block (arguments that are no JSON object: none). */
function invoke(name: string, args: string): string {
  let text = `<invoke name="${name}">\n`;
  const parsed = tryParseOrderedJson(args);
  if (parsed instanceof Map) {
    for (const [key, value] of parsed) {
      const v = typeof value === "string" ? value : pythonJsonDumps(value);
      text += `<parameter name="${key}">${v}</parameter>\n`;
    }
  }
  return text + "</invoke>\n";
}

/** The content and calls of an assistant turn, after its reasoning, through `[e~[`. */
function answerBody(m: TemplateMessage, content: string): string {
  const calls = m.tool_calls ?? [];
  const block = calls.length === 0 ? "" : "\n<minimax:tool_call>\n" +
    calls.map((c) => invoke(c.function.name, c.function.arguments)).join("") +
    "</minimax:tool_call>";
  return content + block + "[e~[";
}

export class MiniMaxM2TextRenderer implements TextRenderer {
  /** @param identity the system message when a conversation has none (`model_identity`) */
  constructor(readonly identity: string) {}

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const first = msgs[0]?.role === "system" ? 1 : 0;
    const parts = ["]~!b[]~b]system\n", (first ? msgs[0].content : "") || this.identity];
    if (tools.length > 0) {
      parts.push(TOOLS_HEADER);
      for (const t of toTemplateTools(tools)) {
        parts.push(`<tool>${pythonJsonDumps(t.function)}</tool>\n`);
      }
      parts.push(TOOLS_FOOTER);
    }
    parts.push("[e~[\n");
    let lastUser = -1;
    msgs.forEach((m, i) => {
      if (m.role === "user") lastUser = i;
    });
    for (let i = first; i < msgs.length; i++) {
      const m = msgs[i];
      switch (m.role) {
        case "system":
        case "user":
          parts.push(`]~b]${m.role}\n`, m.content, "[e~[\n");
          break;
        case "assistant": {
          const { reasoning, content } = assistantParts(m);
          parts.push("]~b]ai\n");
          if (reasoning && i > lastUser) parts.push(`<think>\n${reasoning}\n</think>\n\n`);
          parts.push(answerBody(m, content), "\n");
          break;
        }
        case "tool":
          if (msgs[i - 1]?.role !== "tool") parts.push("]~b]tool");
          parts.push("\n<response>", m.content, "</response>");
          if (msgs[i + 1]?.role !== "tool") parts.push("[e~[\n");
          break;
      }
    }
    if (addGenerationPrompt) parts.push(MINIMAX_GENERATION_PROMPT);
    return parts.join("");
  }

  /**
   * What the policy writes after the generation prompt (which opened `<think>\n`) for `message`,
   * through `[e~[`: its reasoning (empty reasoning too: the prompt opened the block, the policy
   * closes it), `\n</think>\n\n`, the content and the calls.
   */
  answer(message: AssistantMessage): string {
    const m = toTemplateMessages([message])[0];
    const { reasoning, content } = assistantParts(m);
    return `${reasoning}\n</think>\n\n${answerBody(m, content)}`;
  }
}
