/**
 * The prompt text of the GLM families, written from their chat format: `[gMASK]<sop>`, then one
 * role marker per message (`<|system|>`, `<|user|>`, `<|assistant|>`, `<|observation|>`) and no
 * end-of-message token (a message ends where the next marker begins), `<think>` reasoning,
 * `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>…</tool_call>` calls.
 *
 * Two layouts:
 *
 * - `glm-4.5` (GLM-4.5, 4.5-Air, 4.6): a newline after every role marker; an assistant turn is
 *   `\n<think>REASONING</think>` (or `\n<think></think>`), `\nCONTENT`, then per call
 *   `\n<tool_call>NAME\n` + `<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n` per argument +
 *   `</tool_call>`; tool results `\n<tool_response>\nOUTPUT\n</tool_response>`; the generation
 *   prompt is `<|assistant|>` (thinking on: the policy writes `\n<think>`) or
 *   `<|assistant|>\n<think></think>` with `/nothink` after every user message (thinking off).
 * - `glm-5` (GLM-4.7, GLM-5) and `glm-5.1`: nothing between markers and text; an assistant turn
 *   is `<think>REASONING</think>` or a lone `</think>`, CONTENT, calls without newlines; tool
 *   results `<tool_response>OUTPUT</tool_response>`; the generation prompt is
 *   `<|assistant|><think>` (thinking on) or `<|assistant|></think>`. `clear_thinking: false`
 *   keeps every turn's reasoning. GLM-5.1 also wraps the turn after the last user message in an
 *   empty `<think></think>` when it has no reasoning, and lists each tool's `function` object
 *   (without `defer_loading`, `strict`) where GLM-5 lists the whole `{type, function}`.
 *
 * In both, reasoning shows only for assistant turns after the last user message (unless kept),
 * text is trimmed (Python `str.strip`), a non-string argument value is `json.dumps` (Python
 * spacing and float spelling, `ensure_ascii=False`), a string value is written raw, tools are
 * listed one `json.dumps` per line in a system turn after `[gMASK]<sop>`.
 *
 * GLM-5.3 is the GLM-5.1 tool list with a `<|system|>Reasoning Effort: Max` (`Low`, `High`)
 * preamble right after `[gMASK]<sop>`, always thinking (the prompt opens `<think>`; every
 * assistant turn is `<think>REASONING</think>`, an empty `<think></think>` where reasoning is not
 * shown), reasoning kept in every turn by default (`clear_thinking` false) and not trimmed, and a
 * run of tool results ordered by the calls of the assistant turn before it (when their ids match
 * one to one).
 *
 * One place where rollgate follows the model's template rather than `renderers` (the test
 * reference): in GLM-4.5, every call after content is `\n<tool_call>…`; `renderers` drops the
 * newline before the second and later calls when the turn has content.
 *
 * @module
 */
import type { Message, ToolSpec } from "../../../canonical/mod.ts";
import { pythonJsonDumps, pythonStrip } from "../../python_json.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { type JsonValue, tryParseOrderedJson } from "../ordered_json.ts";
import type { TextRenderer } from "../text_renderer.ts";

export type GlmLayout = "glm-4.5" | "glm-5" | "glm-5.1" | "glm-5.3";

export interface GlmOptions {
  layout: GlmLayout;
  /** `enable_thinking` (default true). */
  enableThinking: boolean;
  /** `clear_thinking` (GLM-5 layouts, default true; GLM-5.3 false): earlier turns lose reasoning. */
  clearThinking: boolean;
  /** GLM-5.3's `reasoning_effort` (`low`, `high`, `max`): its preamble after `[gMASK]<sop>`. */
  reasoningEffort?: string;
}

const TOOLS_INTRO = "\n# Tools\n\nYou may call one or more functions to assist with the user " +
  "query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
// The call-format instructions after the tool list: the model was trained on exactly this text.
const TOOLS_OUTRO_45 = "</tools>\n\nFor each function call, output the function name and " +
  "arguments within the following XML format:\n<tool_call>{function-name}\n" +
  "<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n" +
  "<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>";
const TOOLS_OUTRO_5 = "</tools>\n\nFor each function call, output the function name and " +
  "arguments within the following XML format:\n<tool_call>{function-name}" +
  "<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value>" +
  "<arg_key>{arg-key-2}</arg_key><arg_value>{arg-value-2}</arg_value>...</tool_call>";

/** Reasoning and content of an assistant message as the template reads them. */
function assistantParts(m: TemplateMessage): { reasoning: string; content: string } {
  if (typeof m.reasoning_content === "string") {
    return { reasoning: m.reasoning_content, content: m.content };
  }
  if (!m.content.includes("</think>")) return { reasoning: "", content: m.content };
  const parts = m.content.split("</think>");
  return {
    reasoning: parts[0].replace(/\n+$/, "").split("<think>").at(-1)!.replace(/^\n+/, ""),
    content: parts.at(-1)!.replace(/^\n+/, ""),
  };
}

export class GlmTextRenderer implements TextRenderer {
  readonly #wide: boolean;

  constructor(readonly options: GlmOptions) {
    this.#wide = options.layout === "glm-4.5";
  }

  /** What the generation prompt adds after `<|assistant|>`. */
  get generationTail(): string {
    if (this.#wide) return this.options.enableThinking ? "" : "\n<think></think>";
    return this.options.enableThinking ? "<think>" : "</think>";
  }

  /** One argument value as the template writes it. */
  argumentValue(value: JsonValue): string {
    return typeof value === "string" ? value : pythonJsonDumps(value);
  }

  /** The `<tool_call>…</tool_call>` block of one call (arguments that are no JSON object: none). */
  toolCall(name: string, args: string): string {
    const nl = this.#wide ? "\n" : "";
    let text = `<tool_call>${name}${nl}`;
    const parsed = tryParseOrderedJson(args);
    if (parsed instanceof Map) {
      for (const [key, value] of parsed) {
        text += `<arg_key>${key}</arg_key>${nl}<arg_value>${this.argumentValue(value)}` +
          `</arg_value>${nl}`;
      }
    }
    return text + "</tool_call>";
  }

  /** An assistant turn after its `<|assistant|>` marker. */
  assistantBody(m: TemplateMessage, afterLastUser: boolean): string {
    const { reasoning, content } = assistantParts(m);
    const keep = afterLastUser || (!this.#wide && !this.options.clearThinking);
    const parts: string[] = [];
    if (this.#wide) {
      parts.push(
        keep && reasoning ? `\n<think>${pythonStrip(reasoning)}</think>` : "\n<think></think>",
      );
    } else if (this.options.layout === "glm-5.3") {
      // Always an explicit think block; its reasoning kept as given (not trimmed).
      const given = typeof m.reasoning_content === "string" ? reasoning : pythonStrip(reasoning);
      parts.push(`<think>${keep ? given : ""}</think>`);
    } else if (keep && reasoning) {
      parts.push(`<think>${pythonStrip(reasoning)}</think>`);
    } else if (
      this.options.layout === "glm-5.1" && afterLastUser && this.options.enableThinking
    ) {
      parts.push("<think></think>");
    } else {
      parts.push("</think>");
    }
    const text = pythonStrip(content);
    if (text) parts.push(this.#wide ? "\n" + text : text);
    for (const c of m.tool_calls ?? []) {
      parts.push(this.#wide ? "\n" : "", this.toolCall(c.function.name, c.function.arguments));
    }
    return parts.join("");
  }

  /** The tool list as the system turn writes it. */
  #toolList(tools: readonly ToolSpec[]): string {
    const lines = toTemplateTools(tools).map((t) => {
      if (this.options.layout === "glm-5" || this.#wide) return pythonJsonDumps(t);
      const { defer_loading: _d, strict: _s, ...fn } = t.function as Record<string, unknown>;
      return pythonJsonDumps(fn);
    });
    return TOOLS_INTRO + lines.map((l) => l + "\n").join("") +
      (this.#wide ? TOOLS_OUTRO_45 : TOOLS_OUTRO_5);
  }

  /**
   * The run of tool results starting at `start`; GLM-5.3 orders it by the calls of the assistant
   * message before it when the ids match one to one (otherwise, and in the other layouts, as
   * given).
   */
  #toolBlock(msgs: readonly TemplateMessage[], start: number): TemplateMessage[] {
    let end = start;
    while (msgs[end]?.role === "tool") end++;
    const block = msgs.slice(start, end);
    const calls = msgs[start - 1]?.role === "assistant" ? msgs[start - 1].tool_calls : undefined;
    if (this.options.layout !== "glm-5.3" || !calls?.length) return block;
    const byId = new Map(block.map((r) => [r.tool_call_id, r]));
    const ids = calls.map((c) => c.id);
    const oneToOne = ids.length === block.length && byId.size === block.length &&
      new Set(ids).size === ids.length && ids.every((id) => id && byId.has(id));
    return oneToOne ? ids.map((id) => byId.get(id)!) : block;
  }

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const msgs = toTemplateMessages(messages);
    const nl = this.#wide ? "\n" : "";
    const parts = ["[gMASK]<sop>"];
    if (this.options.layout === "glm-5.3") {
      const effort = this.options.reasoningEffort ?? "max";
      parts.push(`<|system|>Reasoning Effort: ${effort[0].toUpperCase()}${effort.slice(1)}`);
    }
    if (tools.length > 0) parts.push("<|system|>", this.#toolList(tools));
    let lastUser = -1;
    msgs.forEach((m, i) => {
      if (m.role === "user") lastUser = i;
    });
    msgs.forEach((m, i) => {
      switch (m.role) {
        case "system":
          parts.push("<|system|>", nl, m.content);
          break;
        case "user": {
          parts.push("<|user|>", nl, m.content);
          if (this.#wide && !this.options.enableThinking && !m.content.endsWith("/nothink")) {
            parts.push("/nothink");
          }
          break;
        }
        case "assistant":
          parts.push("<|assistant|>", this.assistantBody(m, i > lastUser));
          break;
        case "tool": {
          if (i > 0 && msgs[i - 1].role === "tool") break;
          parts.push("<|observation|>");
          for (const r of this.#toolBlock(msgs, i)) {
            parts.push(
              this.#wide
                ? `\n<tool_response>\n${r.content}\n</tool_response>`
                : `<tool_response>${r.content}</tool_response>`,
            );
          }
          break;
        }
      }
    });
    if (addGenerationPrompt) parts.push("<|assistant|>", this.generationTail);
    return parts.join("");
  }
}
