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
import type { ToolCall, ToolSpec } from "../../../canonical/mod.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import { isPythonSpace, pythonStrip } from "../../python_json.ts";

const CALL_OPEN = "<tool_call>";
const CALL_CLOSE = "</tool_call>";
const FUNCTION_OPEN = "<function=";
const FUNCTION_CLOSE = "</function>";
const PARAM_OPEN = "<parameter=";
const PARAM_CLOSE = "</parameter>";
/** Parse attempts per output before giving up on the whole-run parse (adversarial text). */
const BUDGET = 20_000;

interface RawCall {
  name: string;
  params: [string, string][];
  start: number;
  end: number;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isPythonSpace(text.charCodeAt(i))) i++;
  return i;
}

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

/** A value holding the boundary between two calls (no longer value can be one either). */
const CALL_BOUNDARY = /<\/tool_call>\s*<tool_call>/;

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
    let i = skipSpace(t, start + CALL_OPEN.length);
    const fn = tagName(t, i, FUNCTION_OPEN);
    if (!fn) return;
    i = fn.end;
    for (const { params, end } of this.params(i, [])) {
      let j = skipSpace(t, end + FUNCTION_CLOSE.length);
      if (!t.startsWith(CALL_CLOSE, j)) continue;
      j += CALL_CLOSE.length;
      yield { name: fn.name, params, start, end: j };
    }
  }

  /** Parameters from `i` up to a `</function>` (its index is `end`), earliest ends first. */
  *params(
    i: number,
    acc: [string, string][],
  ): Generator<{ params: [string, string][]; end: number }> {
    if (--this.budget < 0) return;
    const t = this.text;
    i = skipSpace(t, i);
    if (t.startsWith(FUNCTION_CLOSE, i)) yield { params: acc, end: i };
    const p = tagName(t, i, PARAM_OPEN);
    if (!p) return;
    for (
      let close = t.indexOf(PARAM_CLOSE, p.end);
      close >= 0;
      close = t.indexOf(PARAM_CLOSE, close + 1)
    ) {
      const raw = t.slice(p.end, close);
      if (CALL_BOUNDARY.test(raw)) return;
      if (opensCall(raw)) continue;
      const next = skipSpace(t, close + PARAM_CLOSE.length);
      if (!t.startsWith(PARAM_OPEN, next) && !t.startsWith(FUNCTION_CLOSE, next)) continue;
      yield* this.params(next, [...acc, [p.name, valueText(raw)]]);
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

/** Declared JSON types of a tool's parameter, or null when the schema does not say. */
function declaredTypes(tool: ToolSpec | undefined, key: string): Set<string> | null {
  const props = (tool?.parameters as { properties?: Record<string, unknown> } | undefined)
    ?.properties;
  const schema = props && Object.hasOwn(props, key) ? props[key] : undefined;
  if (typeof schema !== "object" || schema === null) return null;
  const types = new Set<string>();
  const collect = (s: unknown) => {
    if (typeof s !== "object" || s === null) return;
    const { type, enum: values, anyOf, oneOf } = s as Record<string, unknown>;
    if (typeof type === "string") types.add(type);
    if (Array.isArray(type)) type.forEach((x) => typeof x === "string" && types.add(x));
    if (Array.isArray(values) && type === undefined) {
      values.forEach((v) => types.add(v === null ? "null" : typeof v));
    }
    for (const branch of [anyOf, oneOf]) if (Array.isArray(branch)) branch.forEach(collect);
  };
  collect(schema);
  return types.size > 0 ? types : null;
}

const PYTHON_LITERALS: Record<string, string> = { True: "true", False: "false", None: "null" };

/** One parameter value as JSON text. */
function valueJson(value: string, types: Set<string> | null): string {
  const onlyString = types === null || [...types].every((t) => t === "string");
  if (!onlyString) {
    if (tryParseOrderedJson(value) !== undefined) return value;
    if (Object.hasOwn(PYTHON_LITERALS, value)) return PYTHON_LITERALS[value];
  }
  return JSON.stringify(value);
}

/**
 * The arguments JSON of a call: `{"key": value, …}` in the order written (a repeated key keeps
 * its first place and its last value, as a Python dict).
 */
export function xmlArgumentsJson(
  name: string,
  params: readonly [string, string][],
  tools: readonly ToolSpec[],
): string {
  const tool = tools.find((t) => t.name === name);
  const members = new Map<string, string>();
  for (const [key, value] of params) members.set(key, valueJson(value, declaredTypes(tool, key)));
  return `{${[...members].map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(", ")}}`;
}

export interface XmlToolCallSplit {
  content: string;
  toolCalls: ToolCall[];
  /** Blocks (or bare `<function=`) that did not parse; their text stays in `content`. */
  malformed: number;
}

function countOf(text: string, marker: string): number {
  let n = 0;
  for (let i = text.indexOf(marker); i >= 0; i = text.indexOf(marker, i + marker.length)) n++;
  return n;
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
): XmlToolCallSplit {
  const first = text.indexOf(CALL_OPEN);
  const reader = new CallReader(text);
  let calls = first < 0 ? [] : reader.run(first);
  /** Texts around the parsed calls, in order. */
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
  const malformed = blocks > 0 ? blocks : countOf(left, FUNCTION_OPEN);
  const content = texts.map(pythonStrip).filter((t) => t !== "").join("\n");
  const toolCalls = calls.map((c) => ({
    id: newToolCallId(),
    name: c.name,
    arguments: xmlArgumentsJson(c.name, c.params, tools),
  }));
  return { content, toolCalls, malformed };
}
