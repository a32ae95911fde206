/**
 * The prompt text of DeepSeek V4, written from its format (the model ships a Python encoder, not a
 * chat template; `renderers`' `deepseek_v4` mirrors that encoder and is the test reference):
 *
 * - `<｜begin▁of▁sentence｜>`, then in thinking mode the reasoning-effort prompt (`high`, `max`;
 *   none for `low`), then the system message as bare text (the leading ones joined by a blank
 *   line). With tools, a blank line and the tool description (`## Tools` …, the DSML call format,
 *   one `json.dumps` schema per tool) follow the system message, or the effort prompt when there
 *   is none.
 * - No tool role: a run of user messages and tool results is one user turn, `<｜User｜>` then its
 *   blocks joined by a blank line, a tool result written `<tool_result>OUTPUT</tool_result>`.
 *   Results are ordered by the calls of the last assistant turn with calls (stable; an unknown id
 *   sorts first).
 * - After a user turn: `<｜Assistant｜>` and `<think>` (thinking) or `</think>` (chat). An
 *   assistant turn is its reasoning and `</think>` (thinking mode), its text verbatim, its calls,
 *   `<｜end▁of▁sentence｜>`. Calls: a blank line, `<｜DSML｜tool_calls>`, one
 *   `<｜DSML｜invoke name="NAME">` block per call (one
 *   `<｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>` line per
 *   argument: a string as it is with `string="true"`, any other value as `json.dumps` with
 *   `string="false"`), `</｜DSML｜tool_calls>`, each on its own line.
 * - `drop_thinking` (default on) without tools: assistant turns before the last user turn lose
 *   their reasoning and follow `</think>`. With tools every turn keeps it (append-only).
 *
 * One deliberate difference: the encoder writes a system message after the first as bare text
 * with no turn marker, and when it is the last message no generation prompt follows it; agents
 * send such reminders, so it is rendered as user text (a block of the user turn it joins).
 *
 * @module
 */
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { pythonJsonDumps } from "../../python_json.ts";
import { type TemplateMessage, toTemplateMessages, toTemplateTools } from "../../template_input.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import type { TextRenderer } from "../text_renderer.ts";

/** DeepSeek V4's markers (`｜` is U+FF5C, `▁` U+2581; `｜DSML｜` is one added token). */
export const DS4 = {
  bos: "<｜begin▁of▁sentence｜>",
  eos: "<｜end▁of▁sentence｜>",
  user: "<｜User｜>",
  assistant: "<｜Assistant｜>",
  think: "<think>",
  thinkEnd: "</think>",
  dsml: "｜DSML｜",
  callsOpen: "<｜DSML｜tool_calls>",
  callsClose: "</｜DSML｜tool_calls>",
  invokeClose: "</｜DSML｜invoke>",
  paramClose: "</｜DSML｜parameter>",
} as const;

export type ReasoningEffort = "low" | "high" | "max";

// The effort prompts and the tool description the model was trained on, exactly.
const EFFORT_PROMPTS: Record<ReasoningEffort, string> = {
  low: "",
  high: "Reasoning Effort: Absolute maximum with no shortcuts permitted.\nYou MUST be very " +
    "thorough in your thinking and comprehensively decompose the problem to resolve the root " +
    "cause, rigorously stress-testing your logic against all potential paths, edge cases, and " +
    "adversarial scenarios.\nExplicitly write out your entire deliberation process, documenting " +
    "every intermediate step, considered alternative, and rejected hypothesis to ensure " +
    "absolutely no assumption is left unchecked.\n\n",
  max: "Reasoning Effort: Beyond maximum — exhaustive, relentless, and uncompromising.\nYou " +
    "MUST reason with the utmost depth and rigor, leaving absolutely nothing to chance: " +
    "exhaustively decompose the problem into its most fundamental components, trace every " +
    "causal chain to its root, and resolve the underlying cause rather than any surface " +
    "symptom.\nDo not stop reasoning until you have independently verified the solution from " +
    "multiple angles and are certain that no assumption remains unchecked and no error remains " +
    "undiscovered.\n\n",
};

const D = DS4.dsml;
const TOOLS_HEAD = "## Tools\n\nYou have access to a set of tools to help answer the user's " +
  `question. You can invoke tools by writing a "<${D}tool_calls>" block like the following:\n\n` +
  `<${D}tool_calls>\n<${D}invoke name="$TOOL_NAME">\n<${D}parameter name="$PARAMETER_NAME" ` +
  `string="true|false">$PARAMETER_VALUE</${D}parameter>\n...\n</${D}invoke>\n` +
  `<${D}invoke name="$TOOL_NAME2">\n...\n</${D}invoke>\n</${D}tool_calls>\n\n` +
  'String parameters should be specified as is and set `string="true"`. For all other types ' +
  "(numbers, booleans, arrays, objects), pass the value in JSON format and set " +
  '`string="false"`.\n\nIf thinking_mode is enabled (triggered by <think>), you MUST output ' +
  "your complete reasoning inside <think>...</think> BEFORE any tool calls or final response." +
  "\n\nOtherwise, output directly after </think> with tool calls or final response.\n\n" +
  "### Available Tool Schemas\n\n";
const TOOLS_TAIL = "\n\nYou MUST strictly follow the above defined tool name and parameter " +
  "schemas to invoke tool calls.\n";

/** The tool description, or "" without tools. */
export function deepSeekV4ToolsText(tools: readonly ToolSpec[]): string {
  if (tools.length === 0) return "";
  return TOOLS_HEAD + toTemplateTools(tools).map((t) => pythonJsonDumps(t.function)).join("\n") +
    TOOLS_TAIL;
}

/** One call's `<｜DSML｜invoke>` block. Arguments that are no JSON object are one `arguments`. */
export function dsmlInvoke(name: string, args: string): string {
  const parsed = tryParseOrderedJson(args);
  const entries: [string, unknown][] = parsed instanceof Map
    ? [...parsed]
    : [["arguments", parsed === undefined ? args : parsed]];
  const params = entries.map(([key, value]) => {
    const string = typeof value === "string";
    return `<${D}parameter name="${key}" string="${string}">` +
      `${string ? value : pythonJsonDumps(value)}</${D}parameter>`;
  });
  return `<${D}invoke name="${name}">\n${params.join("\n")}\n</${D}invoke>`;
}

/** An assistant turn's text and calls as history shows them (no reasoning, no end token). */
function assistantBody(m: TemplateMessage): string {
  const calls = m.tool_calls ?? [];
  if (calls.length === 0) return m.content;
  return m.content + `\n\n${DS4.callsOpen}\n` +
    calls.map((c) => dsmlInvoke(c.function.name, c.function.arguments)).join("\n") +
    `\n${DS4.callsClose}`;
}

interface UserTurn {
  role: "user";
  blocks: { text: string; callId?: string }[];
}
type Logical = UserTurn | TemplateMessage;

/** User messages, tool results and later system messages folded into user turns. */
function logicalMessages(msgs: readonly TemplateMessage[]): Logical[] {
  const out: Logical[] = [];
  let order = new Map<string, number>();
  msgs.forEach((m, i) => {
    if (m.role === "assistant") {
      out.push(m);
      if (m.tool_calls?.length) order = new Map(m.tool_calls.map((c, k) => [c.id, k]));
      return;
    }
    if (m.role === "system" && i === 0) {
      out.push(m);
      return;
    }
    const block = m.role === "tool"
      ? { text: `<tool_result>${m.content}</tool_result>`, callId: m.tool_call_id ?? "" }
      : { text: m.content };
    const last = out.at(-1);
    if (last && "blocks" in last) last.blocks.push(block);
    else out.push({ role: "user", blocks: [block] });
    // Parallel results follow their calls' order (stable, unknown ids first).
    const turn = out.at(-1) as UserTurn;
    const results = turn.blocks.filter((b) => b.callId !== undefined);
    if (m.role === "tool" && results.length > 1 && order.size > 0) {
      const sorted = [...results].sort((a, b) =>
        (order.get(a.callId!) ?? 0) - (order.get(b.callId!) ?? 0)
      );
      let k = 0;
      turn.blocks = turn.blocks.map((b) => b.callId === undefined ? b : sorted[k++]);
    }
  });
  return out;
}

export interface DeepSeekV4Options {
  /** Thinking mode (`enable_thinking`, default false: chat mode). */
  thinking: boolean;
  /** `drop_thinking` (default true): without tools, earlier turns lose their reasoning. */
  dropThinking: boolean;
  /** `reasoning_effort` (thinking mode): the prompt after the begin token. */
  effort: ReasoningEffort;
}

export class DeepSeekV4TextRenderer implements TextRenderer {
  constructor(readonly options: DeepSeekV4Options) {}

  render(
    messages: readonly Message[],
    tools: readonly ToolSpec[],
    { addGenerationPrompt }: { addGenerationPrompt: boolean },
  ): string {
    const { thinking } = this.options;
    const logical = logicalMessages(toTemplateMessages(messages));
    const parts: string[] = [DS4.bos, thinking ? EFFORT_PROMPTS[this.options.effort] : ""];
    const toolsText = deepSeekV4ToolsText(tools);
    if (toolsText && logical[0]?.role !== "system") parts.push("\n\n", toolsText);
    const drop = thinking && this.options.dropThinking && tools.length === 0;
    let lastQuery = -1;
    logical.forEach((m, i) => {
      if ("blocks" in m) lastQuery = i;
    });
    logical.forEach((m, i) => {
      if ("blocks" in m) {
        parts.push(DS4.user, m.blocks.map((b) => b.text).join("\n\n"));
        const next = logical[i + 1];
        if (next ? next.role === "assistant" : addGenerationPrompt) {
          const open = thinking && (!drop || i >= lastQuery);
          parts.push(DS4.assistant, open ? DS4.think : DS4.thinkEnd);
        }
      } else if (m.role === "system") {
        parts.push(m.content);
        if (toolsText) parts.push("\n\n", toolsText);
      } else {
        if (thinking && (!drop || i > lastQuery)) {
          parts.push(m.reasoning_content ?? "", DS4.thinkEnd);
        }
        parts.push(assistantBody(m), DS4.eos);
      }
    });
    return parts.join("");
  }

  /** What the policy writes for `message` after the generation prompt, end token included. */
  answer(message: AssistantMessage): string {
    const [m] = toTemplateMessages([message]);
    const reasoning = this.options.thinking ? (m.reasoning_content ?? "") + DS4.thinkEnd : "";
    return reasoning + assistantBody(m) + DS4.eos;
  }
}
