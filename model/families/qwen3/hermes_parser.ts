/**
 * Hermes output (Qwen3, Qwen2.5, Hermes): `<think>…</think>` reasoning (split on ids by the
 * family's `ThinkTagRules`), then content, then `<tool_call>` blocks each holding
 * `{"name": …, "arguments": {…}}` (split on text). Arguments keep the model's own JSON text.
 *
 * A malformed tool call (bad JSON, no name, arguments not an object, never closed) stays in the
 * content as text and is counted: the policy sees the consequence of its own mistake, the
 * gateway never crashes on it, and nothing that looks like a call passes silently.
 *
 * @module
 */
import type { AssistantMessage, ToolCall } from "../../../canonical/mod.ts";
import type { OutputParser, ParsedOutput } from "../../parsers/mod.ts";
import { splitReasoning, type ThinkTagRules } from "../think_tags.ts";
import { rawMember } from "./json_member.ts";

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

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";
/** `</tool_call>`s tried as the end of one call before it counts as malformed. */
const MAX_ENDS = 64;

/**
 * Splits decoded content (after reasoning) into text and tool calls. A call ends at the first
 * `</tool_call>` after which its body is a valid call, so a JSON string holding `</tool_call>`
 * does not cut it short. A block that never parses (or is never closed) stays text and counts
 * as malformed.
 */
export function splitToolCalls(
  text: string,
  newToolCallId: () => string,
): { content: string; toolCalls: ToolCall[]; malformed: number } {
  const toolCalls: ToolCall[] = [];
  const texts: string[] = [];
  let malformed = 0;
  let last = 0;
  for (let at = text.indexOf(OPEN); at >= 0;) {
    const first = text.indexOf(CLOSE, at + OPEN.length);
    let call: ToolCall | null = null, end = first;
    for (let e = first, n = 0; e >= 0 && n < MAX_ENDS; e = text.indexOf(CLOSE, e + 1), n++) {
      call = toToolCall(text.slice(at + OPEN.length, e), "");
      if (call) {
        end = e;
        break;
      }
    }
    if (!call) {
      malformed++;
      at = first < 0 ? -1 : text.indexOf(OPEN, first + CLOSE.length);
      continue;
    }
    call.id = newToolCallId();
    toolCalls.push(call);
    texts.push(text.slice(last, at));
    last = end + CLOSE.length;
    at = text.indexOf(OPEN, last);
  }
  texts.push(text.slice(last));
  if (toolCalls.length === 0) return { content: text, toolCalls, malformed };
  // The template writes content, "\n", then each call separated by "\n": undo exactly that.
  const [before, ...between] = texts;
  const rest = between.map((t) => t.trim()).filter((t) => t !== "");
  const content = [before.replace(/\n$/, ""), ...rest].filter((t) => t !== "").join("\n");
  return { content, toolCalls, malformed };
}

export class HermesParser implements OutputParser {
  readonly name = "hermes";
  constructor(
    readonly rules: ThinkTagRules,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  async parse(sampled: readonly number[], newToolCallId: () => string): Promise<ParsedOutput> {
    const split = await splitReasoning(sampled, this.rules, this.decode);
    const { content, toolCalls, malformed } = splitToolCalls(split.body, newToolCallId);
    const message: AssistantMessage = { role: "assistant", content };
    if (split.reasoning !== undefined) message.reasoning_content = split.reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens: split.reasoningTokens };
  }
}
