/**
 * Llama 3's tool call in decoded output: the whole answer is one JSON object,
 * `{"name": "NAME", "parameters": {…}}` (`arguments` read too, as vLLM's `llama3_json` parser
 * does). In the layout the template writes, the arguments keep the policy's own JSON text;
 * another layout is read as JSON and its arguments written back as JSON (history then
 * writes the call the template's way: drift, reported). An answer that begins `{"name"` and does
 * not parse stays text and is counted as malformed; any other text is content.
 *
 * @module
 */
import { pythonJson } from "../../python_json.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import type { ToolCallSplit } from "../tool_call_output.ts";

/** The text that starts a call (where a stream stops sending content). */
export const LLAMA3_CALL_START = '{"name"';

const TEMPLATE_LAYOUT = /^\{"name": "([^"\\]+)", "parameters": ([\s\S]*)\}$/;

/**
 * Splits a decoded answer (trimmed) into content or one tool call.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { splitLlama3ToolCall } from "./tool_calls.ts";
 *
 * const split = splitLlama3ToolCall('{"name": "bash", "parameters": {"c": 1}}', () => "call_1");
 * assert.deepEqual(split.toolCalls, [{ id: "call_1", name: "bash", arguments: '{"c": 1}' }]);
 * ```
 */
export function splitLlama3ToolCall(text: string, newToolCallId: () => string): ToolCallSplit {
  const asText = { content: text, toolCalls: [], malformed: 0 };
  if (!text.startsWith("{")) return asText;
  const exact = TEMPLATE_LAYOUT.exec(text);
  if (exact && tryParseOrderedJson(exact[2]) instanceof Map) {
    return {
      content: "",
      toolCalls: [{ id: newToolCallId(), name: exact[1], arguments: exact[2] }],
      malformed: 0,
    };
  }
  const parsed = tryParseOrderedJson(text);
  const name = parsed instanceof Map ? parsed.get("name") : undefined;
  const args = parsed instanceof Map ? parsed.get("parameters") ?? parsed.get("arguments") : null;
  if (typeof name === "string" && name !== "" && (args === undefined || args instanceof Map)) {
    return {
      content: "",
      toolCalls: [{
        id: newToolCallId(),
        name,
        arguments: args === undefined ? "{}" : pythonJson(args),
      }],
      malformed: 0,
    };
  }
  return text.startsWith(LLAMA3_CALL_START) ? { ...asText, malformed: 1 } : asText;
}
