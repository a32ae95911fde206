/**
 * Kimi K2's tool calls, read from decoded text:
 *
 * ```
 * <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:INDEX<|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>
 * ```
 *
 * The call id is the policy's own (`functions.NAME:INDEX`): it is kept as the call's id, so the
 * agent echoes it and the next prompt renders it as sampled, and the name is read from it (the
 * text between `functions.` and the last `:`). Arguments are the JSON object between the markers,
 * kept verbatim. The markers are added tokens, so a JSON string value holding the text
 * `<|tool_call_end|>` renders into the marker's own id; an argument text ends at the first
 * `<|tool_call_end|>` before which it is a whole JSON object and after which the section goes on
 * (another call or its end) and parses to the end. A section that does not parse stays in the
 * content as text and is counted as malformed (so is an empty section, or a call marker outside
 * one). Content before the section is verbatim (the template renders it so); whitespace after
 * the section is allowed.
 *
 * @module
 */
import type { ToolCall } from "../../../canonical/mod.ts";
import type { ToolCallSplit } from "../tool_call_output.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";

const SECTION_OPEN = "<|tool_calls_section_begin|>";
const SECTION_CLOSE = "<|tool_calls_section_end|>";
const CALL_OPEN = "<|tool_call_begin|>";
const ARGS_OPEN = "<|tool_call_argument_begin|>";
const CALL_CLOSE = "<|tool_call_end|>";
/** Parse attempts per section (adversarial text). */
const BUDGET = 20_000;
/** `functions.NAME:INDEX` (the `functions.` prefix optional, as vLLM reads it). */
const CALL_ID = /^(?:functions\.)?([^\s<>:]+(?::[^\s<>:]+)*):(\d+)$/;

/** The calls of a section body from `i` to `</section>` at its end, or null. */
function readCalls(text: string, i: number, budget: { n: number }): ToolCall[] | null {
  if (--budget.n < 0) return null;
  if (text.startsWith(SECTION_CLOSE, i)) {
    return text.slice(i + SECTION_CLOSE.length).trim() === "" ? [] : null;
  }
  if (!text.startsWith(CALL_OPEN, i)) return null;
  const argsAt = text.indexOf(ARGS_OPEN, i + CALL_OPEN.length);
  if (argsAt < 0) return null;
  const id = text.slice(i + CALL_OPEN.length, argsAt).trim();
  const match = CALL_ID.exec(id);
  if (!match) return null;
  const from = argsAt + ARGS_OPEN.length;
  for (
    let end = text.indexOf(CALL_CLOSE, from);
    end >= 0;
    end = text.indexOf(CALL_CLOSE, end + 1)
  ) {
    const args = text.slice(from, end);
    if (!(tryParseOrderedJson(args) instanceof Map)) continue;
    const rest = readCalls(text, end + CALL_CLOSE.length, budget);
    if (rest) return [{ id, name: match[1], arguments: args }, ...rest];
    if (budget.n < 0) return null;
  }
  return null;
}

/**
 * Splits decoded output into content and tool calls.
 *
 * @example
 * ```ts
 * import { splitKimiToolCalls } from "./tool_calls.ts";
 *
 * const text = "Reading.<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0" +
 *   '<|tool_call_argument_begin|>{"path": "a.py"}<|tool_call_end|><|tool_calls_section_end|>';
 * splitKimiToolCalls(text);
 * // { content: "Reading.", toolCalls: [{ id: "functions.read:0", name: "read", arguments: '{"path": "a.py"}' }], malformed: 0 }
 * ```
 */
export function splitKimiToolCalls(text: string): ToolCallSplit {
  const at = text.indexOf(SECTION_OPEN);
  if (at < 0) {
    return { content: text, toolCalls: [], malformed: text.includes(CALL_OPEN) ? 1 : 0 };
  }
  // The section runs to the end of the output (the template writes nothing after it).
  const calls = readCalls(text, at + SECTION_OPEN.length, { n: BUDGET });
  if (calls && calls.length > 0) {
    return { content: text.slice(0, at), toolCalls: calls, malformed: 0 };
  }
  return { content: text, toolCalls: [], malformed: 1 };
}
