/**
 * Hy3's tool calls in decoded output: text, then `<tool_calls>\n` + GLM-shaped calls in Hy3's own
 * markers (`<tool_call>NAME<tool_sep>\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n…
 * </tool_call>\n`, every marker `:opensource`-suffixed) + `</tool_calls>`. The calls are read by
 * the GLM reader with Hy3's markers (values holding markup, typing by schema, malformed blocks);
 * the text before the section is content, verbatim (the template writes it so).
 *
 * @module
 */
import type { ToolSpec } from "../../../canonical/mod.ts";
import { type GlmCallMarkers, splitGlmToolCalls } from "../glm/mod.ts";
import type { ToolCallSplit } from "../tool_call_output.ts";
import { HY3 } from "./render.ts";

const MARKERS: GlmCallMarkers = {
  callOpen: HY3.toolCall,
  callClose: HY3.toolCallEnd,
  keyOpen: HY3.argKey,
  keyClose: HY3.argKeyEnd,
  valueOpen: HY3.argValue,
  valueClose: HY3.argValueEnd,
  nameEnd: HY3.toolSep,
};

/**
 * Splits decoded content (after reasoning, end token removed) into text and tool calls.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HY3 } from "./render.ts";
 * import { splitHy3ToolCalls } from "./tool_calls.ts";
 *
 * const call = `${HY3.toolCall}ls${HY3.toolSep}\n${HY3.argKey}p${HY3.argKeyEnd}\n` +
 *   `${HY3.argValue}.${HY3.argValueEnd}\n${HY3.toolCallEnd}\n`;
 * const split = splitHy3ToolCalls(`Ok.${HY3.toolCalls}\n${call}${HY3.toolCallsEnd}`, [], () => "c");
 * assert.deepEqual(split.toolCalls, [{ id: "c", name: "ls", arguments: '{"p": "."}' }]);
 * assert.equal(split.content, "Ok.");
 * ```
 */
export function splitHy3ToolCalls(
  text: string,
  tools: readonly ToolSpec[],
  newToolCallId: () => string,
): ToolCallSplit {
  const section = text.indexOf(HY3.toolCalls);
  if (section < 0) return splitGlmToolCalls(text, tools, newToolCallId, true, MARKERS);
  let inner = text.slice(section + HY3.toolCalls.length);
  const end = inner.lastIndexOf(HY3.toolCallsEnd);
  const closed = end >= 0 && inner.slice(end + HY3.toolCallsEnd.length).trim() === "";
  if (closed) inner = inner.slice(0, end);
  const split = splitGlmToolCalls(inner, tools, newToolCallId, true, MARKERS);
  if (split.toolCalls.length === 0 || split.malformed > 0 || split.content.trim() !== "") {
    // Not a section of calls to its end: all of it stays text, counted.
    return { content: text, toolCalls: [], malformed: Math.max(1, split.malformed) };
  }
  return { content: text.slice(0, section), toolCalls: split.toolCalls, malformed: 0 };
}
