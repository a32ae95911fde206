/**
 * MiniMax M2's tool calls, read from decoded content (after reasoning):
 *
 * ```
 * CONTENT\n<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="KEY">VALUE</parameter>\n…</invoke>\n…</minimax:tool_call>
 * ```
 *
 * The block markers are added tokens; `<invoke>` and `<parameter>` are text. Values are raw text
 * (never trimmed), typed by the tool's schema as the XML calls are (`xmlArgumentsJson`). A value
 * may hold the text `</parameter>` (a patch to this parser): it ends at the first `</parameter>`
 * after which the markup goes on (`<parameter name=` or `</invoke>`) and the rest of the output
 * still parses as calls to its end. One or more blocks run to the end of the output (whitespace
 * between and after). The content is everything before the first block, less the one newline
 * the template writes before it. Calls that do not parse stay in the content as text and are
 * counted as malformed (so is an `<invoke name=` outside any block).
 *
 * @module
 */
import type { ToolSpec } from "../../../canonical/mod.ts";
import type { ToolCallSplit } from "../tool_call_output.ts";
import { skipSpace } from "../tool_call_blocks.ts";
import { xmlArgumentsJson } from "../xml_arguments.ts";

export const BLOCK_OPEN = "<minimax:tool_call>";
const BLOCK_CLOSE = "</minimax:tool_call>";
const INVOKE_OPEN = '<invoke name="';
const INVOKE_CLOSE = "</invoke>";
const PARAM_OPEN = '<parameter name="';
const PARAM_CLOSE = "</parameter>";
/** Parse attempts per output (adversarial text). */
const BUDGET = 20_000;

interface RawCall {
  name: string;
  args: [string, string][];
}

class Reader {
  budget = BUDGET;
  constructor(readonly text: string) {}

  /** Blocks from `i` to the end of the text, or null. */
  blocks(i: number): RawCall[] | null {
    const t = this.text;
    i = skipSpace(t, i);
    if (i === t.length) return [];
    if (!t.startsWith(BLOCK_OPEN, i)) return null;
    return this.invokes(i + BLOCK_OPEN.length, true);
  }

  /** Invokes from `i` to `</minimax:tool_call>` and the blocks after it, or null. */
  invokes(i: number, first: boolean): RawCall[] | null {
    if (--this.budget < 0) return null;
    const t = this.text;
    i = skipSpace(t, i);
    if (t.startsWith(BLOCK_CLOSE, i)) return first ? null : this.blocks(i + BLOCK_CLOSE.length);
    if (!t.startsWith(INVOKE_OPEN, i)) return null;
    const nameEnd = t.indexOf('">', i + INVOKE_OPEN.length);
    if (nameEnd < 0) return null;
    const name = t.slice(i + INVOKE_OPEN.length, nameEnd);
    if (name === "" || /[\n<>"]/.test(name)) return null;
    return this.params(nameEnd + 2, { name, args: [] });
  }

  /** Parameters of `call` from `i` through `</invoke>`, then the rest, earliest ends first. */
  params(i: number, call: RawCall): RawCall[] | null {
    if (--this.budget < 0) return null;
    const t = this.text;
    i = skipSpace(t, i);
    if (t.startsWith(INVOKE_CLOSE, i)) {
      const rest = this.invokes(i + INVOKE_CLOSE.length, false);
      return rest && [call, ...rest];
    }
    if (!t.startsWith(PARAM_OPEN, i)) return null;
    const keyEnd = t.indexOf('">', i + PARAM_OPEN.length);
    if (keyEnd < 0) return null;
    const key = t.slice(i + PARAM_OPEN.length, keyEnd);
    if (key === "" || /[\n<>]/.test(key)) return null;
    const from = keyEnd + 2;
    for (let at = t.indexOf(PARAM_CLOSE, from); at >= 0; at = t.indexOf(PARAM_CLOSE, at + 1)) {
      const next = skipSpace(t, at + PARAM_CLOSE.length);
      if (!t.startsWith(PARAM_OPEN, next) && !t.startsWith(INVOKE_CLOSE, next)) continue;
      const args: [string, string][] = [...call.args, [key, t.slice(from, at)]];
      const rest = this.params(next, { name: call.name, args });
      if (rest) return rest;
      if (this.budget < 0) return null;
    }
    return null;
  }
}

/**
 * Splits decoded content into text and tool calls.
 *
 * @example
 * ```ts
 * import { splitMiniMaxToolCalls } from "./tool_calls.ts";
 *
 * const text = 'Reading.\n<minimax:tool_call>\n<invoke name="read">\n' +
 *   '<parameter name="path">a.py</parameter>\n</invoke>\n</minimax:tool_call>';
 * splitMiniMaxToolCalls(text, [], () => "call_1");
 * // { content: "Reading.", toolCalls: [{ id: "call_1", name: "read", arguments: '{"path": "a.py"}' }], malformed: 0 }
 * ```
 */
export function splitMiniMaxToolCalls(
  text: string,
  tools: readonly ToolSpec[],
  newToolCallId: () => string,
): ToolCallSplit {
  const at = text.indexOf(BLOCK_OPEN);
  if (at < 0) {
    return { content: text, toolCalls: [], malformed: text.includes(INVOKE_OPEN) ? 1 : 0 };
  }
  const calls = new Reader(text).blocks(at);
  if (!calls) return { content: text, toolCalls: [], malformed: 1 };
  const before = text.slice(0, at);
  return {
    content: before.endsWith("\n") ? before.slice(0, -1) : before,
    toolCalls: calls.map((c) => ({
      id: newToolCallId(),
      name: c.name,
      arguments: xmlArgumentsJson(c.name, c.args, tools),
    })),
    malformed: 0,
  };
}
