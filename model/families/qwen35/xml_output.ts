/**
 * The output of the XML tool-call families (Qwen3.5, Qwen3.6, Qwen3-Coder): `<think>` reasoning,
 * content, then XML `<tool_call>` blocks. Complete parse and streaming follow the same
 * `ThinkTagRules` (trimmed as Python's `str.strip`, the way the template trims what it renders).
 *
 * @module
 */
import { type FamilyContext, type OutputFormat, requireToken } from "../family.ts";
import { type TurnIds, turnIds } from "../chatml_ids.ts";
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

/**
 * A ChatML family's turn ids and its XML output format, bound to the family's tokenizer (every
 * marker required): what Qwen3.5/3.6/3.8 and Nemotron 3 share.
 */
export async function chatmlXmlOutput(
  ctx: FamilyContext,
  family: string,
  promptOpensReasoning: boolean,
): Promise<{ ids: TurnIds; output: OutputFormat }> {
  const ids = await turnIds(ctx, family, "<|im_end|>");
  requireToken(ctx, family, "<|im_start|>");
  const output = xmlOutputFormat(
    {
      thinkStart: requireToken(ctx, family, "<think>"),
      thinkEnd: requireToken(ctx, family, "</think>"),
      toolCall: requireToken(ctx, family, "<tool_call>"),
      endOfTurn: ids.stopTokenIds,
    },
    promptOpensReasoning,
    (ids) => ctx.tokenizer.decode(ids),
  );
  return { ids, output };
}
