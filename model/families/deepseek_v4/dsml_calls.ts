/**
 * DeepSeek V4's DSML tool calls in decoded output: content, then a blank line and
 *
 * ```
 * <｜DSML｜tool_calls>
 * <｜DSML｜invoke name="NAME">
 * <｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>
 * …
 * </｜DSML｜invoke>
 * …
 * </｜DSML｜tool_calls>
 * ```
 *
 * `string="true"`: the value is the text itself; `string="false"`: the value is JSON, kept in the
 * policy's own spelling. The section starts at the first blank line + `<｜DSML｜tool_calls>` (the
 * marker the stream stops at, so what streams is always a prefix of this parse); the content is
 * the text before it. `｜DSML｜` is an added token, so a string value holding the markup's text
 * renders into the very ids of the markup: a value ends at the first `</｜DSML｜parameter>` after
 * which the markup continues (another parameter or `</｜DSML｜invoke>`) and the rest of the
 * section still parses to its end (a `string="false"` value must also be JSON there).
 * Whitespace between markup pieces is read as markup.
 *
 * A section that does not parse as a whole stays in the content as text and is counted as
 * malformed; so is `<｜DSML｜tool_calls>` without the blank line before it, or an invoke
 * outside a section. Text after the section is kept as content (the format writes none).
 *
 * @module
 */
import type { ToolCall } from "../../../canonical/mod.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import type { ToolCallSplit } from "../tool_call_output.ts";
import { DS4 } from "./render.ts";

/** Where the section starts, as text: what content stops at (streaming included). */
export const DSML_SECTION = "\n\n" + DS4.callsOpen;

const INVOKE_OPEN = `<${DS4.dsml}invoke name="`;
const PARAM_OPEN = `<${DS4.dsml}parameter name="`;

/** Attempts at reading one section before it counts as malformed (ambiguous value ends). */
const BUDGET = 256;

interface Call {
  name: string;
  args: [string, string][];
}

function skipSpace(t: string, i: number): number {
  while (i < t.length && /\s/.test(t[i])) i++;
  return i;
}

/** `"VALUE">` at `i` (VALUE without quotes or newlines): the value and the index after `>`. */
function quoted(t: string, i: number, suffix: string): { value: string; end: number } | null {
  const close = t.indexOf('"', i);
  if (close < 0) return null;
  const value = t.slice(i, close);
  if (value === "" || /[\n<>]/.test(value) || !t.startsWith(suffix, close)) return null;
  return { value, end: close + suffix.length };
}

class SectionReader {
  budget = BUDGET;
  constructor(readonly text: string) {}

  /** Invokes from `i` to `</｜DSML｜tool_calls>`: the calls and the index after it. */
  *invokes(i: number, acc: Call[]): Generator<{ calls: Call[]; end: number }> {
    if (--this.budget < 0) return;
    const t = this.text;
    i = skipSpace(t, i);
    if (t.startsWith(DS4.callsClose, i)) {
      if (acc.length > 0) yield { calls: acc, end: i + DS4.callsClose.length };
      return;
    }
    if (!t.startsWith(INVOKE_OPEN, i)) return;
    const name = quoted(t, i + INVOKE_OPEN.length, '">');
    if (!name) return;
    for (const { args, end } of this.params(name.end, [])) {
      yield* this.invokes(end, [...acc, { name: name.value, args }]);
    }
  }

  /** Parameters from `i` to `</｜DSML｜invoke>`: the arguments and the index after it. */
  *params(
    i: number,
    acc: [string, string][],
  ): Generator<{ args: [string, string][]; end: number }> {
    if (--this.budget < 0) return;
    const t = this.text;
    i = skipSpace(t, i);
    if (t.startsWith(DS4.invokeClose, i)) {
      yield { args: acc, end: i + DS4.invokeClose.length };
      return;
    }
    if (!t.startsWith(PARAM_OPEN, i)) return;
    const key = quoted(t, i + PARAM_OPEN.length, '" string="');
    if (!key || acc.some(([k]) => k === key.value)) return;
    const kind = t.startsWith('true">', key.end)
      ? "true"
      : t.startsWith('false">', key.end)
      ? "false"
      : null;
    if (kind === null) return;
    const from = key.end + kind.length + 2;
    for (
      let e = t.indexOf(DS4.paramClose, from);
      e >= 0;
      e = t.indexOf(DS4.paramClose, e + 1)
    ) {
      const after = skipSpace(t, e + DS4.paramClose.length);
      if (!t.startsWith(PARAM_OPEN, after) && !t.startsWith(DS4.invokeClose, after)) continue;
      const raw = t.slice(from, e);
      const json = kind === "true" ? JSON.stringify(raw) : raw;
      if (kind === "false" && tryParseOrderedJson(raw) === undefined) continue;
      yield* this.params(after, [...acc, [key.value, json]]);
      if (this.budget < 0) return;
    }
  }
}

/**
 * Splits decoded content (after reasoning, end token removed) into text and DSML tool calls.
 *
 * @example
 * ```ts
 * import { splitDsmlToolCalls } from "./dsml_calls.ts";
 *
 * const out = splitDsmlToolCalls(
 *   'Listing.\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="bash">\n' +
 *     '<｜DSML｜parameter name="command" string="true">ls</｜DSML｜parameter>\n' +
 *     "</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
 *   () => "call_1",
 * );
 * // out.content: "Listing."; out.toolCalls: [{ id: "call_1", name: "bash", arguments: '{"command": "ls"}' }]
 * ```
 */
export function splitDsmlToolCalls(text: string, newToolCallId: () => string): ToolCallSplit {
  const at = text.indexOf(DSML_SECTION);
  if (at < 0) {
    // Markup without a section that could be read: text, counted.
    const stray = text.includes(DS4.callsOpen) || text.includes(INVOKE_OPEN);
    return { content: text, toolCalls: [], malformed: stray ? 1 : 0 };
  }
  // The first reading that ends the output (only whitespace after it), else the first at all.
  let found: { calls: Call[]; end: number } | undefined;
  for (const r of new SectionReader(text).invokes(at + DSML_SECTION.length, [])) {
    found ??= r;
    if (text.slice(r.end).trim() === "") {
      found = r;
      break;
    }
  }
  if (!found) return { content: text, toolCalls: [], malformed: 1 };
  const { calls, end } = found;
  const toolCalls: ToolCall[] = calls.map((c) => ({
    id: newToolCallId(),
    name: c.name,
    arguments: `{${c.args.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(", ")}}`,
  }));
  return { content: text.slice(0, at) + text.slice(end), toolCalls, malformed: 0 };
}
