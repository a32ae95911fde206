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

/** The markers of a GLM-shaped call (Hy3 writes the same shape with its own tokens). */
export interface GlmCallMarkers {
  callOpen: string;
  callClose: string;
  keyOpen: string;
  keyClose: string;
  valueOpen: string;
  valueClose: string;
  /** Hy3: the marker that ends the name (`<tool_sep>`); GLM's name ends at the first key. */
  nameEnd?: string;
}

export const GLM_CALL_MARKERS: GlmCallMarkers = {
  callOpen: CALL_OPEN,
  callClose: CALL_CLOSE,
  keyOpen: "<arg_key>",
  keyClose: "</arg_key>",
  valueOpen: "<arg_value>",
  valueClose: "</arg_value>",
};

class GlmCallReader extends CallBlockReader {
  // vLLM's glm45 parser and `renderers` decode every value not declared a string.
  override readonly undeclared = "json";
  constructor(text: string, readonly m: GlmCallMarkers) {
    super(text, m.callOpen, m.callClose);
  }

  *calls(start: number): Generator<RawCall> {
    const t = this.text, m = this.m;
    const from = start + m.callOpen.length;
    let nameEnd: number, argsFrom: number;
    if (m.nameEnd !== undefined) {
      nameEnd = t.indexOf(m.nameEnd, from);
      argsFrom = nameEnd + m.nameEnd.length;
    } else {
      const key = t.indexOf(m.keyOpen, from), close = t.indexOf(m.callClose, from);
      argsFrom = nameEnd = key >= 0 && (close < 0 || key < close) ? key : close;
    }
    if (nameEnd < 0) return;
    const name = pythonStrip(t.slice(from, nameEnd));
    if (name === "" || /[\n<>]/.test(name)) return;
    for (const { args, end } of this.args(argsFrom, [])) {
      yield { name, args, end: end + m.callClose.length };
    }
  }

  /** Arguments from `i` up to a `</tool_call>` (its index is `end`), earliest ends first. */
  *args(i: number, acc: [string, string][]): Generator<{ args: [string, string][]; end: number }> {
    if (--this.budget < 0) return;
    const t = this.text, m = this.m;
    i = skipSpace(t, i);
    if (t.startsWith(m.callClose, i)) {
      yield { args: acc, end: i };
      return;
    }
    if (!t.startsWith(m.keyOpen, i)) return;
    const keyEnd = t.indexOf(m.keyClose, i + m.keyOpen.length);
    if (keyEnd < 0) return;
    const key = pythonStrip(t.slice(i + m.keyOpen.length, keyEnd));
    if (key === "" || key.includes("<")) return;
    const open = skipSpace(t, keyEnd + m.keyClose.length);
    if (!t.startsWith(m.valueOpen, open)) return;
    const ends = this.valueEnds(open + m.valueOpen.length, m.valueClose, [m.keyOpen, m.callClose]);
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
  markers: GlmCallMarkers = GLM_CALL_MARKERS,
): ToolCallSplit {
  return splitCallBlocks(
    new GlmCallReader(text, markers),
    markers.keyOpen,
    tools,
    newToolCallId,
    verbatim,
  );
}
