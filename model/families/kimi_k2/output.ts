/**
 * The output of Kimi K2: content verbatim, then a tool-calls section; no reasoning. Streaming
 * sends the content as it comes (nothing trimmed) and stops at the section marker; the calls come
 * from the complete parse, with the policy's own ids (`functions.NAME:INDEX`), so the parser's
 * `newToolCallId` is not used.
 *
 * @module
 */
import type { OutputFormat } from "../family.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { splitKimiToolCalls } from "./tool_calls.ts";

/**
 * @param sectionStart the id of `<|tool_calls_section_begin|>`
 * @param stop the ids that end a turn (`<|im_end|>`, `[EOS]`)
 */
export function kimiK2OutputFormat(
  sectionStart: number,
  stop: readonly number[],
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  return thinkToolCallOutput(
    "kimi_k2",
    {
      thinkStart: -1,
      thinkEnd: -1,
      endOfTurn: stop,
      promptOpensReasoning: false,
      trim: "none",
      toolCallStart: { text: "<|tool_calls_section_begin|>", id: sectionStart },
    },
    splitKimiToolCalls,
    decode,
  );
}
