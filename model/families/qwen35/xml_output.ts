/**
 * The output of the XML tool-call families (Qwen3.5, Qwen3.6, Qwen3-Coder): `<think>` reasoning,
 * content, then XML `<tool_call>` blocks. Complete parse and streaming follow the same
 * `ThinkTagRules` (trimmed as Python's `str.strip`, the way the template trims what it renders).
 *
 * @module
 */
import type { OutputFormat } from "../family.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { splitXmlToolCalls } from "./xml_tool_calls.ts";

/** Ids the XML output needs: think tags, `<tool_call>`, end-of-turn ids. */
export interface XmlOutputIds {
  thinkStart: number;
  thinkEnd: number;
  toolCall: number;
  endOfTurn: readonly number[];
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
  return thinkToolCallOutput(
    "qwen3_coder",
    {
      thinkStart: ids.thinkStart,
      thinkEnd: ids.thinkEnd,
      endOfTurn: ids.endOfTurn,
      promptOpensReasoning,
      trim: "whitespace",
      toolCallStart: { text: "<tool_call>", id: ids.toolCall },
      toolCallClosesReasoning: true,
    },
    splitXmlToolCalls,
    decode,
  );
}
