/**
 * Qwen3 output: `<think>…</think>` reasoning, then content, then `<tool_call>` blocks each
 * holding `{"name": …, "arguments": {…}}`. The think and tool-call markers are single added
 * tokens, so reasoning is split on ids and tool calls on text.
 *
 * A malformed tool call (bad JSON, no name, arguments not an object) stays in the content as
 * text and is counted: the policy sees the consequence of its own mistake, the gateway never
 * crashes on it.
 *
 * @module
 */
import type { AssistantMessage, ToolCall } from "../../canonical/mod.ts";
import type { OutputParser, ParsedOutput } from "./output_parser.ts";
import { rawMember } from "./json_member.ts";

export interface Qwen3TokenIds {
  thinkStart: number;
  thinkEnd: number;
  /** Ids that end a turn and are not part of the message (`<|im_end|>`, `<|endoftext|>`). */
  endOfTurn: number[];
}

const TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;

function stripNewlines(s: string): string {
  return s.replace(/^\n+/, "").replace(/\n+$/, "");
}

function toToolCall(body: string, id: string): ToolCall | null {
  const text = body.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return null;
  const { name, arguments: args } = parsed as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string" || name === "") return null;
  if (typeof args === "object" && args !== null && !Array.isArray(args)) {
    return { id, name, arguments: rawMember(text, "arguments")! };
  }
  if (typeof args === "string") {
    // Arguments given as a JSON string: accept it when it holds an object.
    try {
      const inner = JSON.parse(args);
      if (typeof inner === "object" && inner !== null && !Array.isArray(inner)) {
        return { id, name, arguments: args };
      }
    } catch { /* fall through */ }
  }
  if (args === undefined) return { id, name, arguments: "{}" };
  return null;
}

/** Splits decoded content (after reasoning) into text and tool calls. */
export function splitToolCalls(
  text: string,
  newToolCallId: () => string,
): { content: string; toolCalls: ToolCall[]; malformed: number } {
  const toolCalls: ToolCall[] = [];
  const texts: string[] = [];
  let malformed = 0;
  let last = 0;
  for (const match of text.matchAll(TOOL_CALL)) {
    const call = toToolCall(match[1], "");
    if (!call) {
      malformed++;
      continue;
    }
    call.id = newToolCallId();
    toolCalls.push(call);
    texts.push(text.slice(last, match.index));
    last = match.index! + match[0].length;
  }
  texts.push(text.slice(last));
  if (toolCalls.length === 0) return { content: text, toolCalls, malformed };
  // The template writes content, "\n", then each call separated by "\n": undo exactly that.
  const [before, ...between] = texts;
  const rest = between.map((t) => t.trim()).filter((t) => t !== "");
  const content = [before.replace(/\n$/, ""), ...rest].filter((t) => t !== "").join("\n");
  return { content, toolCalls, malformed };
}

export class Qwen3Parser implements OutputParser {
  readonly name = "qwen3";
  constructor(
    private readonly ids: Qwen3TokenIds,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  async parse(sampled: readonly number[], newToolCallId: () => string): Promise<ParsedOutput> {
    let end = sampled.length;
    while (end > 0 && this.ids.endOfTurn.includes(sampled[end - 1])) end--;
    const ids = sampled.slice(0, end);
    let reasoning: string | undefined;
    let reasoningTokens = 0;
    let body = ids;
    const close = ids.indexOf(this.ids.thinkEnd);
    const open = ids.indexOf(this.ids.thinkStart);
    if (close >= 0 && (open < 0 || open < close)) {
      reasoning = stripNewlines(await this.decode(ids.slice(open < 0 ? 0 : open + 1, close)));
      reasoningTokens = close + 1;
      body = ids.slice(close + 1);
    } else if (open === 0) {
      // Cut off while thinking.
      reasoning = stripNewlines(await this.decode(ids.slice(1)));
      reasoningTokens = ids.length;
      body = [];
    }
    const text = (await this.decode(body)).replace(/^\n+/, "");
    const { content, toolCalls, malformed } = splitToolCalls(text, newToolCallId);
    const message: AssistantMessage = { role: "assistant", content };
    if (reasoning !== undefined) message.reasoning_content = reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens };
  }
}
