/**
 * The output of the XML tool-call families (Qwen3.5, Qwen3.6, Qwen3-Coder): `<think>` reasoning,
 * content, then XML `<tool_call>` blocks. Complete parse and streaming follow the same
 * `ThinkTagRules` (trimmed as Python's `str.strip`, the way the template trims what it renders).
 *
 * @module
 */
import type { AssistantMessage, ToolSpec } from "../../../canonical/mod.ts";
import type { OutputParser, ParsedOutput, StreamingOutputParser } from "../../parsers/mod.ts";
import type { OutputFormat } from "../family.ts";
import { splitReasoning, ThinkStreamParser, type ThinkTagRules } from "../think_tags.ts";
import { splitXmlToolCalls } from "./xml_tool_calls.ts";

/** Ids the XML output needs: think tags, `<tool_call>`, end-of-turn ids. */
export interface XmlOutputIds {
  thinkStart: number;
  thinkEnd: number;
  toolCall: number;
  endOfTurn: readonly number[];
}

export class XmlToolCallParser implements OutputParser {
  readonly name = "qwen3_coder";
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
    const { content, toolCalls, malformed } = splitXmlToolCalls(split.body, tools, newToolCallId);
    const message: AssistantMessage = { role: "assistant", content };
    if (split.reasoning !== undefined) message.reasoning_content = split.reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens: split.reasoningTokens };
  }
}

/**
 * Parser and streaming parser of the XML output.
 *
 * @param promptOpensReasoning the generation prompt ends in `<think>\n`
 */
export function xmlOutputFormat(
  ids: XmlOutputIds,
  promptOpensReasoning: boolean,
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  const rules: ThinkTagRules = {
    thinkStart: ids.thinkStart,
    thinkEnd: ids.thinkEnd,
    endOfTurn: ids.endOfTurn,
    promptOpensReasoning,
    trim: "whitespace",
    toolCallStart: { text: "<tool_call>", id: ids.toolCall },
    toolCallClosesReasoning: true,
  };
  return {
    parser: new XmlToolCallParser(rules, decode),
    streamingParser: (): StreamingOutputParser => new ThinkStreamParser(rules, decode),
  };
}
