/**
 * DeepSeek V3.1 tool calls in decoded output: content, then
 * `<｜tool▁calls▁begin｜>` + (`<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{json}<｜tool▁call▁end｜>`)+ +
 * `<｜tool▁calls▁end｜>`.
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

/** One call starting at `at` (at `<｜tool▁call▁begin｜>`): the call and where it ends, or null. */
function readCall(text: string, at: number): { call: ToolCall; end: number } | null {
  const nameAt = at + DS.callBegin.length;
  const sep = text.indexOf(DS.sep, nameAt);
  if (sep < 0) return null;
  const name = text.slice(nameAt, sep);
  if (name === "" || name.includes("<｜") || /\s/.test(name)) return null;
  const argsAt = sep + DS.sep.length;
  for (
    let e = text.indexOf(DS.callEnd, argsAt), n = 0;
    e >= 0 && n < MAX_ENDS;
    e = text.indexOf(DS.callEnd, e + 1), n++
  ) {
    const args = text.slice(argsAt, e);
    if (tryParseOrderedJson(args) instanceof Map) {
      return { call: { id: "", name, arguments: args }, end: e + DS.callEnd.length };
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
    const read = text.startsWith(DS.callBegin, at) ? readCall(text, at) : null;
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
