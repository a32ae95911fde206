/**
 * The output of the GLM families: `<think>` reasoning (opened by the generation prompt in the
 * GLM-5 layouts, written by the policy after a newline in GLM-4.5), content, then
 * `<tool_call>NAME<arg_key>…` blocks; the policy stops on a role marker (`<|observation|>`,
 * `<|user|>`) or `<|endoftext|>`. Complete parse and streaming follow the same `ThinkTagRules`
 * (trimmed as Python's `str.strip`, the way the template trims what it renders).
 *
 * @module
 */
import type { AssistantMessage, ToolSpec } from "../../../canonical/mod.ts";
import type { OutputParser, ParsedOutput, StreamingOutputParser } from "../../parsers/mod.ts";
import type { OutputFormat } from "../family.ts";
import { splitReasoning, ThinkStreamParser, type ThinkTagRules } from "../think_tags.ts";
import { splitGlmToolCalls } from "./tool_calls.ts";

/** Ids the GLM output needs: think tags (-1 with thinking off), `<tool_call>`, stop ids. */
export interface GlmOutputIds {
  thinkStart: number;
  thinkEnd: number;
  toolCall: number;
  stop: readonly number[];
}

export class GlmToolCallParser implements OutputParser {
  readonly name = "glm45";
  constructor(
    readonly rules: ThinkTagRules,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  async parse(
    ids: readonly number[],
    newToolCallId: () => string,
    tools: readonly ToolSpec[] = [],
  ): Promise<ParsedOutput> {
    const split = await splitReasoning(ids, this.rules, this.decode);
    const { content, toolCalls, malformed } = splitGlmToolCalls(split.body, tools, newToolCallId);
    const message: AssistantMessage = { role: "assistant", content };
    if (split.reasoning !== undefined) message.reasoning_content = split.reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens: split.reasoningTokens };
  }
}

/**
 * Parser and streaming parser of the GLM output.
 *
 * @param promptOpensReasoning the generation prompt ends in `<think>` (GLM-5 layouts, thinking on)
 */
export function glmOutputFormat(
  ids: GlmOutputIds,
  promptOpensReasoning: boolean,
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  const rules: ThinkTagRules = {
    thinkStart: ids.thinkStart,
    thinkEnd: ids.thinkEnd,
    endOfTurn: ids.stop,
    promptOpensReasoning,
    trim: "whitespace",
    toolCallStart: { text: "<tool_call>", id: ids.toolCall },
    toolCallClosesReasoning: true,
  };
  return {
    parser: new GlmToolCallParser(rules, decode),
    streamingParser: (): StreamingOutputParser => new ThinkStreamParser(rules, decode),
  };
}
