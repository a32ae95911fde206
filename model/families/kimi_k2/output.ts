/**
 * The output of Kimi K2: content verbatim, then a tool-calls section; no reasoning. Streaming
 * sends the content as it comes (nothing trimmed) and stops at the section marker; the calls come
 * from the complete parse.
 *
 * @module
 */
import type { AssistantMessage, ToolSpec } from "../../../canonical/mod.ts";
import type { OutputParser, ParsedOutput, StreamingOutputParser } from "../../parsers/mod.ts";
import type { OutputFormat } from "../family.ts";
import { splitReasoning, ThinkStreamParser, type ThinkTagRules } from "../think_tags.ts";
import { splitKimiToolCalls } from "./tool_calls.ts";

export class KimiK2Parser implements OutputParser {
  readonly name = "kimi_k2";
  constructor(
    readonly rules: ThinkTagRules,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  /** Tool-call ids are the policy's own (`functions.NAME:INDEX`); `newToolCallId` is not used. */
  async parse(
    ids: readonly number[],
    _newToolCallId: () => string,
    _tools?: readonly ToolSpec[],
  ): Promise<ParsedOutput> {
    const { body } = await splitReasoning(ids, this.rules, this.decode);
    const { content, toolCalls, malformed } = splitKimiToolCalls(body);
    const message: AssistantMessage = { role: "assistant", content };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { message, malformedToolCalls: malformed, reasoningTokens: 0 };
  }
}

/**
 * @param sectionStart the id of `<|tool_calls_section_begin|>`
 * @param stop the ids that end a turn (`<|im_end|>`, `[EOS]`)
 */
export function kimiK2OutputFormat(
  sectionStart: number,
  stop: readonly number[],
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  const rules: ThinkTagRules = {
    thinkStart: -1,
    thinkEnd: -1,
    endOfTurn: stop,
    promptOpensReasoning: false,
    trim: "none",
    toolCallStart: { text: "<|tool_calls_section_begin|>", id: sectionStart },
  };
  return {
    parser: new KimiK2Parser(rules, decode),
    streamingParser: (): StreamingOutputParser => new ThinkStreamParser(rules, decode),
  };
}
