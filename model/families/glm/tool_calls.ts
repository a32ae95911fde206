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
 * other is the JSON the template wrote. A block that does not parse stays in the content as text
 * and is counted as malformed; so is a stray `<arg_key>` outside any block.
 *
 * @module
 */
import type { ToolCall, ToolSpec } from "../../../canonical/mod.ts";
import { isPythonSpace, pythonStrip } from "../../python_json.ts";
import { xmlArgumentsJson } from "../qwen35/mod.ts";

const CALL_OPEN = "<tool_call>";
const CALL_CLOSE = "</tool_call>";
const KEY_OPEN = "<arg_key>";
const KEY_CLOSE = "</arg_key>";
const VALUE_OPEN = "<arg_value>";
const VALUE_CLOSE = "</arg_value>";
/** Parse attempts per output before giving up on the whole-run parse (adversarial text). */
const BUDGET = 20_000;
/** A value holding the boundary between two calls (no longer value can be one either). */
const CALL_BOUNDARY = /<\/tool_call>\s*<tool_call>/;

interface RawCall {
  name: string;
  args: [string, string][];
  end: number;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isPythonSpace(text.charCodeAt(i))) i++;
  return i;
}

/** A value holding a `<tool_call>` it does not close (a longer one may close it). */
function opensCall(raw: string): boolean {
  const open = raw.lastIndexOf(CALL_OPEN);
  return open >= 0 && raw.indexOf(CALL_CLOSE, open) < 0;
}

class CallReader {
  budget = BUDGET;
  constructor(readonly text: string) {}

  /** Every way a call starting at `start` (at `<tool_call>`) can end, earliest first. */
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
    const from = open + VALUE_OPEN.length;
    for (
      let close = t.indexOf(VALUE_CLOSE, from);
      close >= 0;
      close = t.indexOf(VALUE_CLOSE, close + 1)
    ) {
      const raw = t.slice(from, close);
      if (CALL_BOUNDARY.test(raw)) return;
      if (opensCall(raw)) continue;
      const next = skipSpace(t, close + VALUE_CLOSE.length);
      if (!t.startsWith(KEY_OPEN, next) && !t.startsWith(CALL_CLOSE, next)) continue;
      yield* this.args(next, [...acc, [key, raw]]);
      if (this.budget < 0) return;
    }
  }

  /** Calls from `i` to the end of the text (whitespace between and after), or null. */
  run(i: number): RawCall[] | null {
    const t = this.text;
    i = skipSpace(t, i);
    if (i === t.length) return [];
    if (!t.startsWith(CALL_OPEN, i)) return null;
    for (const call of this.calls(i)) {
      const rest = this.run(call.end);
      if (rest) return [call, ...rest];
      if (this.budget < 0) return null;
    }
    return null;
  }
}

export interface GlmToolCallSplit {
  content: string;
  toolCalls: ToolCall[];
  /** Blocks (or stray `<arg_key>`) that did not parse; their text stays in `content`. */
  malformed: number;
}

function countOf(text: string, marker: string): number {
  let n = 0;
  for (let i = text.indexOf(marker); i >= 0; i = text.indexOf(marker, i + marker.length)) n++;
  return n;
}

/**
 * Splits decoded content (after reasoning) into text and tool calls; text is trimmed as Python's
 * `str.strip` does (the template renders `content.strip()`).
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
): GlmToolCallSplit {
  const first = text.indexOf(CALL_OPEN);
  const reader = new CallReader(text);
  let calls = first < 0 ? [] : reader.run(first);
  const texts: string[] = [];
  if (calls) {
    texts.push(text.slice(0, first < 0 ? text.length : first));
  } else {
    // Not one run of calls to the end: read each block on its own, earliest parse first.
    calls = [];
    let last = 0;
    for (let at = first; at >= 0;) {
      reader.budget = BUDGET;
      const call = reader.calls(at).next().value;
      if (call) {
        texts.push(text.slice(last, at));
        calls.push(call);
        last = call.end;
        at = text.indexOf(CALL_OPEN, call.end);
      } else {
        at = text.indexOf(CALL_OPEN, at + CALL_OPEN.length);
      }
    }
    texts.push(text.slice(last));
  }
  const left = texts.join("");
  const blocks = countOf(left, CALL_OPEN);
  return {
    content: texts.map(pythonStrip).filter((t) => t !== "").join("\n"),
    toolCalls: calls.map((c) => ({
      id: newToolCallId(),
      name: c.name,
      arguments: xmlArgumentsJson(c.name, c.args, tools),
    })),
    malformed: blocks > 0 ? blocks : countOf(left, KEY_OPEN),
  };
}
