/**
 * The output of the GLM families: `<think>` reasoning (opened by the generation prompt in the
 * GLM-5 layouts, written by the policy after a newline in GLM-4.5), content, then
 * `<tool_call>NAME<arg_key>…` blocks; the policy stops on a role marker (`<|observation|>`,
 * `<|user|>`) or `<|endoftext|>`. Complete parse and streaming follow the same `ThinkTagRules`
 * (trimmed as Python's `str.strip`, the way the template trims what it renders).
 *
 * @module
 */
import type { OutputFormat } from "../family.ts";
import { thinkToolCallOutput } from "../tool_call_output.ts";
import { splitGlmToolCalls } from "./tool_calls.ts";

/** Ids the GLM output needs: think tags (-1 with thinking off), `<tool_call>`, stop ids. */
export interface GlmOutputIds {
  thinkStart: number;
  thinkEnd: number;
  toolCall: number;
  stop: readonly number[];
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
  return thinkToolCallOutput(
    "glm45",
    {
      thinkStart: ids.thinkStart,
      thinkEnd: ids.thinkEnd,
      endOfTurn: ids.stop,
      promptOpensReasoning,
      trim: "whitespace",
      toolCallStart: { text: "<tool_call>", id: ids.toolCall },
      toolCallClosesReasoning: true,
    },
    splitGlmToolCalls,
    decode,
  );
}
