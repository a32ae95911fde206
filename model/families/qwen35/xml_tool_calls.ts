/**
 * Tool calls in the XML shape of Qwen3-Coder, Qwen3.5 and Qwen3.6, read from decoded text:
 *
 * ```
 * <tool_call>
 * <function=NAME>
 * <parameter=KEY>
 * VALUE
 * </parameter>
 * …
 * </function>
 * </tool_call>
 * ```
 *
 * A value is raw text (one leading and one trailing newline belong to the markup), so it may
 * itself contain `</parameter>`, `</function>` or `</tool_call>` (a test file for this very
 * parser, a patch to a template). A parser that ends a value at the first `</parameter>` cuts
 * such arguments short. Here a value ends at the first `</parameter>` after which the markup
 * continues (`<parameter=` or `</function>`) and the rest of the output still parses as calls to
 * its end; a value never reaches into another call (it holds no `</tool_call>` followed by
 * `<tool_call>`, and no `<tool_call>` it does not close), so a call missing a `</parameter>` or
 * its end cannot swallow the next one. Only if no
 * reading parses to the end is each call read on its own (the rest stays text). What stays
 * ambiguous is a value holding a whole `\n</parameter>\n<parameter=KEY>\n`: both readings
 * render to the same text, and the earlier end is taken (as vLLM's parser does).
 *
 * Values become JSON by the tool's schema: a parameter declared as a string is a JSON string
 * of the text; otherwise the text is used as JSON when it is JSON (its own spelling kept), or
 * as Python's `True`/`False`/`None` (what Qwen3.5's template writes), else as a string. Unknown
 * tools and parameters get strings.
 *
 * A block that does not parse stays in the content as text and is counted as malformed; so is a
 * bare `<function=` outside any block. Nothing that looks like a call is dropped silently.
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

const FUNCTION_OPEN = "<function=";
const FUNCTION_CLOSE = "</function>";
const PARAM_OPEN = "<parameter=";
const PARAM_CLOSE = "</parameter>";

/** The text of `<tag=NAME>` at `i` (name trimmed), or null. */
function tagName(text: string, i: number, open: string): { name: string; end: number } | null {
  if (!text.startsWith(open, i)) return null;
  const close = text.indexOf(">", i + open.length);
  if (close < 0) return null;
  const name = text.slice(i + open.length, close);
  if (/[\n<]/.test(name) || pythonStrip(name) === "") return null;
  return { name: pythonStrip(name), end: close + 1 };
}

/** A value without the newline after `<parameter=…>` and the one before `</parameter>`. */
function valueText(raw: string): string {
  const a = raw.startsWith("\n") ? 1 : 0;
  const b = raw.length > a && raw.endsWith("\n") ? raw.length - 1 : raw.length;
  return raw.slice(a, b);
}

class XmlCallReader extends CallBlockReader {
  *calls(start: number): Generator<RawCall> {
    const t = this.text;
    let i = skipSpace(t, start + CALL_OPEN.length);
    const fn = tagName(t, i, FUNCTION_OPEN);
    if (!fn) return;
    i = fn.end;
    for (const { args, end } of this.params(i, [])) {
      let j = skipSpace(t, end + FUNCTION_CLOSE.length);
      if (!t.startsWith(CALL_CLOSE, j)) continue;
      j += CALL_CLOSE.length;
      yield { name: fn.name, args, end: j };
    }
  }

  /** Parameters from `i` up to a `</function>` (its index is `end`), earliest ends first. */
  *params(
    i: number,
    acc: [string, string][],
  ): Generator<{ args: [string, string][]; end: number }> {
    if (--this.budget < 0) return;
    const t = this.text;
    i = skipSpace(t, i);
    if (t.startsWith(FUNCTION_CLOSE, i)) yield { args: acc, end: i };
    const p = tagName(t, i, PARAM_OPEN);
    if (!p) return;
    for (const { raw, next } of this.valueEnds(p.end, PARAM_CLOSE, [PARAM_OPEN, FUNCTION_CLOSE])) {
      yield* this.params(next, [...acc, [p.name, valueText(raw)]]);
    }
  }
}

/**
 * Splits decoded content (after reasoning) into text and tool calls. Content is trimmed as
 * Python's `str.strip` does (the template renders `content|trim`).
 *
 * @example
 * ```ts
 * const text = "Looking.\n\n<tool_call>\n<function=read>\n<parameter=path>\na.py\n</parameter>\n" +
 *   "</function>\n</tool_call>";
 * const split = splitXmlToolCalls(text, [], () => "call_1");
 * // { content: "Looking.", toolCalls: [{ id: "call_1", name: "read", arguments: '{"path": "a.py"}' }], malformed: 0 }
 * ```
 */
export function splitXmlToolCalls(
  text: string,
  tools: readonly ToolSpec[],
  newToolCallId: () => string,
): ToolCallSplit {
  return splitCallBlocks(new XmlCallReader(text), FUNCTION_OPEN, tools, newToolCallId);
}
