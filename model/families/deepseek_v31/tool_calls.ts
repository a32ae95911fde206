/**
 * DeepSeek tool calls in decoded output: content, then `<｜tool▁calls▁begin｜>` + one call or
 * more + `<｜tool▁calls▁end｜>`. A call is, by style:
 *
 * - `v3.1` (V3.1): `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>`, side by side;
 * - `v3` (V3, R1): `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{json}\n```` +
 *   `<｜tool▁call▁end｜>`, a newline between calls (their templates write one; none is read too).
 *
 * Read on text, so markup inside a JSON string (a command that greps for `<｜tool▁call▁end｜>`,
 * which the tokenizer turns into the added token) never ends a call early: a call ends at the
 * first `<｜tool▁call▁end｜>` after which its arguments are a whole JSON object. The arguments
 * keep the policy's own JSON text.
 *
 * A call that does not parse (no separator, no name, arguments that are no JSON object, text
 * where a call should begin) stops the section: the calls before it are calls, everything from
 * it on stays in the content as text, and it is counted as malformed. A section the output ends
 * in without `<｜tool▁calls▁end｜>` keeps its complete calls.
 *
 * @module
 */
import type { ToolCall } from "../../../canonical/mod.ts";
import { tryParseOrderedJson } from "../ordered_json.ts";
import { DS } from "./render.ts";

/** `<｜tool▁call▁end｜>`s tried as the end of one call's arguments before it counts as malformed. */
const MAX_ENDS = 64;

export interface DeepSeekToolCallSplit {
  content: string;
  toolCalls: ToolCall[];
  malformed: number;
}

/** How a DeepSeek call is written (see the module doc). */
export type DeepSeekCallStyle = "v3.1" | "v3";

/** V3's and R1's fence around a call's arguments. */
const FENCE_OPEN = "\n```json\n";
const FENCE_CLOSE = "\n```";

function validName(name: string): boolean {
  return name !== "" && !name.includes("<｜") && !/\s/.test(name);
}

/** One call starting at `at` (at `<｜tool▁call▁begin｜>`): the call and where it ends, or null. */
function readCall(
  text: string,
  at: number,
  style: DeepSeekCallStyle,
): { call: ToolCall; end: number } | null {
  const headAt = at + DS.callBegin.length;
  const sep = text.indexOf(DS.sep, headAt);
  if (sep < 0) return null;
  let name: string, argsAt: number, close: string;
  if (style === "v3.1") {
    name = text.slice(headAt, sep);
    argsAt = sep + DS.sep.length;
    close = DS.callEnd;
  } else {
    if (text.slice(headAt, sep) !== "function") return null;
    const fence = text.indexOf(FENCE_OPEN, sep);
    if (fence < 0) return null;
    name = text.slice(sep + DS.sep.length, fence);
    argsAt = fence + FENCE_OPEN.length;
    close = FENCE_CLOSE + DS.callEnd;
  }
  if (!validName(name)) return null;
  for (
    let e = text.indexOf(close, argsAt), n = 0;
    e >= 0 && n < MAX_ENDS;
    e = text.indexOf(close, e + 1), n++
  ) {
    const args = text.slice(argsAt, e);
    if (tryParseOrderedJson(args) instanceof Map) {
      return { call: { id: "", name, arguments: args }, end: e + close.length };
    }
  }
  return null;
}

/**
 * Splits decoded output (after reasoning, end token removed) into content and tool calls.
 *
 * @example
 * ```ts
 * import { splitDeepSeekToolCalls } from "./tool_calls.ts";
 *
 * const out = splitDeepSeekToolCalls(
 *   'Listing.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bash<｜tool▁sep｜>{"command": "ls"}' +
 *     "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
 *   () => "call_1",
 * );
 * // out.content: "Listing."; out.toolCalls: [{ id: "call_1", name: "bash", arguments: '{"command": "ls"}' }]
 * ```
 */
export function splitDeepSeekToolCalls(
  text: string,
  newToolCallId: () => string,
  style: DeepSeekCallStyle = "v3.1",
): DeepSeekToolCallSplit {
  const section = text.indexOf(DS.callsBegin);
  if (section < 0) return { content: text, toolCalls: [], malformed: 0 };
  const toolCalls: ToolCall[] = [];
  let at = section + DS.callsBegin.length;
  for (;;) {
    if (at === text.length || text.startsWith(DS.callsEnd, at)) {
      const end = Math.min(text.length, at + DS.callsEnd.length);
      if (toolCalls.length === 0) break;
      // Text after the section is kept as text (the template never writes any).
      return { content: text.slice(0, section) + text.slice(end), toolCalls, malformed: 0 };
    }
    // V3 and R1 write a newline between calls.
    if (style === "v3" && toolCalls.length > 0 && text.startsWith("\n" + DS.callBegin, at)) at++;
    const read = text.startsWith(DS.callBegin, at) ? readCall(text, at, style) : null;
    if (!read) {
      const kept = toolCalls.length === 0 ? text : text.slice(0, section) + text.slice(at);
      return { content: kept, toolCalls, malformed: 1 };
    }
    read.call.id = newToolCallId();
    toolCalls.push(read.call);
    at = read.end;
  }
  // An empty section (`<｜tool▁calls▁begin｜><｜tool▁calls▁end｜>`): no call, and a malformed one.
  return { content: text, toolCalls: [], malformed: 1 };
}
