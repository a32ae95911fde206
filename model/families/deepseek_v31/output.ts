/**
 * The output of DeepSeek V3.1: in thinking mode reasoning up to `</think>` (the generation prompt
 * opened `<think>`; after tool outputs it opens nothing, so reasoning is what precedes a
 * `</think>` the output holds), then content, then the tool-call section. Nothing is trimmed: the
 * template renders the sampled text verbatim.
 *
 * @module
 */
import type { OutputFormat } from "../family.ts";
import type { ThinkTagRules } from "../think_tags.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { DS } from "./render.ts";
import { type DeepSeekCallStyle, splitDeepSeekToolCalls } from "./tool_calls.ts";

/** Ids the output needs: think tags (-1 outside thinking mode), the section start, end ids. */
export interface DeepSeekOutputIds {
  thinkStart: number;
  thinkEnd: number;
  callsBegin: number;
  endOfTurn: readonly number[];
  /** The generation prompt always opens reasoning (R1); V3.1's opens it only after a user turn. */
  promptOpensReasoning?: boolean;
}

/**
 * Parser and streaming parser of DeepSeek V3.1 output (V3's and R1's with `style` `v3`). In thinking mode the prompt's `<think>`
 * is not seen by the parser, so a stream holds its text until `</think>` settles what is
 * reasoning (then the content streams); an answer after tool outputs, which has no `</think>`,
 * comes whole at the end.
 */
export function deepSeekOutputFormat(
  ids: DeepSeekOutputIds,
  decode: (ids: number[]) => Promise<string>,
  style: DeepSeekCallStyle = "v3.1",
): OutputFormat {
  const rules: ThinkTagRules = {
    thinkStart: ids.thinkStart,
    thinkEnd: ids.thinkEnd,
    endOfTurn: ids.endOfTurn,
    promptOpensReasoning: ids.promptOpensReasoning ?? false,
    trim: "none",
    toolCallStart: { text: DS.callsBegin, id: ids.callsBegin },
    firstCloseEndsReasoning: true,
  };
  return thinkToolCallOutput(
    style === "v3.1" ? "deepseek_v31" : "deepseek_v3",
    rules,
    (body, _tools, newToolCallId) => splitDeepSeekToolCalls(body, newToolCallId, style),
    decode,
  );
}
