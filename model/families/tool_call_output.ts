/**
 * The complete-output parser shared by the families whose output is optional `<think>` reasoning,
 * content, then tool calls in the family's own markup: reasoning is split by `ThinkTagRules`, the
 * body by the family's `ToolCallSplitter`. Streaming follows the same rules (`ThinkStreamParser`),
 * so the stream never sends text the complete parse contradicts.
 *
 * @example
 * ```ts
 * import { thinkToolCallOutput, type ToolCallSplit } from "./tool_call_output.ts";
 * declare const decode: (ids: number[]) => Promise<string>;
 *
 * const noCalls = (body: string): ToolCallSplit => ({ content: body, toolCalls: [], malformed: 0 });
 * const output = thinkToolCallOutput("plain", {
 *   thinkStart: -1,
 *   thinkEnd: -1,
 *   endOfTurn: [151645],
 *   promptOpensReasoning: false,
 *   trim: "none",
 *   toolCallStart: { text: "<tool_call>" },
 * }, noCalls, decode);
 * const parsed = await output.parser.parse([9707, 151645], () => "call_1");
 * // parsed.message: { role: "assistant", content: <the text of [9707]> }
 * ```
 *
 * @module
 */
import type { AssistantMessage, ToolCall, ToolSpec } from "../../canonical/mod.ts";
import type { OutputParser, ParsedOutput, StreamingOutputParser } from "../parsers/mod.ts";
import type { OutputFormat } from "./family.ts";
import { splitReasoning, ThinkStreamParser, type ThinkTagRules } from "./think_tags.ts";

/** Decoded content (after reasoning) split into text and tool calls. */
export interface ToolCallSplit {
  content: string;
  toolCalls: ToolCall[];
  /** Call markup that did not parse; its text stays in `content`. */
  malformed: number;
}

/** A family's reading of the tool calls in decoded content. */
export type ToolCallSplitter = (
  body: string,
  tools: readonly ToolSpec[],
  newToolCallId: () => string,
) => ToolCallSplit;

export class ThinkToolCallParser implements OutputParser {
  constructor(
    /** vLLM's name for the tool-call format. */
    readonly name: string,
    readonly rules: ThinkTagRules,
    private readonly split: ToolCallSplitter,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  async parse(
    ids: readonly number[],
    newToolCallId: () => string,
    tools: readonly ToolSpec[] = [],
  ): Promise<ParsedOutput> {
    const reasoning = await splitReasoning(ids, this.rules, this.decode);
    const { content, toolCalls, malformed } = this.split(reasoning.body, tools, newToolCallId);
    const message: AssistantMessage = { role: "assistant", content };
    if (reasoning.reasoning !== undefined) message.reasoning_content = reasoning.reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens: reasoning.reasoningTokens };
  }
}

/** Parser and streaming parser of an output read by `rules` and `split`. */
export function thinkToolCallOutput(
  name: string,
  rules: ThinkTagRules,
  split: ToolCallSplitter,
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  return {
    parser: new ThinkToolCallParser(name, rules, split, decode),
    streamingParser: (): StreamingOutputParser => new ThinkStreamParser(rules, decode),
  };
}
