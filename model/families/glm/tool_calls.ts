/**
 * Tool calls in the GLM shape, read from decoded text:
 *
 * ```
 * <tool_call>NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…</tool_call>
 * ```
 *
 * (GLM-4.5 puts a newline after NAME, after `</arg_key>` and after `</arg_value>`; whitespace
 * between the markup pieces is read as markup in both layouts.) The markers are added tokens, so
 * a value that holds the text `</arg_value>` (a patch to this parser, say) is rendered into the
 * very same ids as the markup: only the text after it can tell them apart. A value ends at the
 * first `</arg_value>` after which the markup continues (`<arg_key>` or `</tool_call>`) and the
 * rest of the output still parses as calls to its end; it never reaches into another call (it
 * holds no `</tool_call>` followed by `<tool_call>`, and no `<tool_call>` it does not close).
 * Only if no reading parses to the end is each call read on its own (the rest stays text). A
 * value holding a whole `</arg_value><arg_key>K</arg_key><arg_value>` stays ambiguous: both
 * readings render the same text, and the earlier end is taken (as vLLM's `glm45` parser does).
 *
 * Values are written raw (never trimmed: the template writes string values verbatim) and typed by
 * the tool's schema as the XML calls are (`xmlArgumentsJson`): a string parameter is the text, any
 * other is the JSON the template wrote; a parameter the schema does not declare is JSON when it
 * parses as JSON (as vLLM's `glm45` parser and `renderers` read it), else the text. A block that does not parse stays in the content as text
 * and is counted as malformed; so is a stray `<arg_key>` outside any block.
 *
 * @module
 */
import type { ToolSpec } from "../../../canonical/mod.ts";
import { pythonStrip } from "../../python_json.ts";
import type { ToolCallSplit } from "../tool_call_output.ts";
import {
  CALL_CLOSE,
  CALL_OPEN,
  CallBlockReader,
  type RawCall,
  skipSpace,
  splitCallBlocks,
} from "../tool_call_blocks.ts";

const KEY_OPEN = "<arg_key>";
const KEY_CLOSE = "</arg_key>";
const VALUE_OPEN = "<arg_value>";
const VALUE_CLOSE = "</arg_value>";

class GlmCallReader extends CallBlockReader {
  // vLLM's glm45 parser and `renderers` decode every value not declared a string.
  override readonly undeclared = "json";
  *calls(start: number): Generator<RawCall> {
    const t = this.text;
    const from = start + CALL_OPEN.length;
    const key = t.indexOf(KEY_OPEN, from), close = t.indexOf(CALL_CLOSE, from);
    const nameEnd = key >= 0 && (close < 0 || key < close) ? key : close;
    if (nameEnd < 0) return;
    const name = pythonStrip(t.slice(from, nameEnd));
    if (name === "" || /[\n<>]/.test(name)) return;
    for (const { args, end } of this.args(nameEnd, [])) {
      yield { name, args, end: end + CALL_CLOSE.length };
    }
  }

  /** Arguments from `i` up to a `</tool_call>` (its index is `end`), earliest ends first. */
  *args(i: number, acc: [string, string][]): Generator<{ args: [string, string][]; end: number }> {
    if (--this.budget < 0) return;
    const t = this.text;
    i = skipSpace(t, i);
    if (t.startsWith(CALL_CLOSE, i)) {
      yield { args: acc, end: i };
      return;
    }
    if (!t.startsWith(KEY_OPEN, i)) return;
    const keyEnd = t.indexOf(KEY_CLOSE, i + KEY_OPEN.length);
    if (keyEnd < 0) return;
    const key = pythonStrip(t.slice(i + KEY_OPEN.length, keyEnd));
    if (key === "" || key.includes("<")) return;
    const open = skipSpace(t, keyEnd + KEY_CLOSE.length);
    if (!t.startsWith(VALUE_OPEN, open)) return;
    const ends = this.valueEnds(open + VALUE_OPEN.length, VALUE_CLOSE, [KEY_OPEN, CALL_CLOSE]);
    for (const { raw, next } of ends) yield* this.args(next, [...acc, [key, raw]]);
  }
}

/**
 * Splits decoded content (after reasoning) into text and tool calls; text is trimmed as Python's
 * `str.strip` does (the template renders `content.strip()`), or kept `verbatim` (Laguna's calls
 * take this shape and its template renders content untrimmed). A stray `<arg_key>` outside any
 * block counts as malformed.
 *
 * @example
 * ```ts
 * import { splitGlmToolCalls } from "./tool_calls.ts";
 *
 * const text = "Looking.<tool_call>read<arg_key>path</arg_key><arg_value>a.py</arg_value></tool_call>";
 * splitGlmToolCalls(text, [], () => "call_1");
 * // { content: "Looking.", toolCalls: [{ id: "call_1", name: "read", arguments: '{"path": "a.py"}' }], malformed: 0 }
 * ```
 */
export function splitGlmToolCalls(
  text: string,
  tools: readonly ToolSpec[],
  newToolCallId: () => string,
  verbatim = false,
): ToolCallSplit {
  return splitCallBlocks(new GlmCallReader(text), KEY_OPEN, tools, newToolCallId, verbatim);
}
