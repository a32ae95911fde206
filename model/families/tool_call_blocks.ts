/**
 * Reading `<tool_call>…</tool_call>` blocks whose argument values are raw text, shared by the XML
 * (Qwen3.5/3.6, Qwen3-Coder) and GLM call formats. The markers are added tokens, so a value may
 * hold the very text of a closing marker (a patch to a parser, a test for a template) in the same
 * ids as the markup. A family's reader yields every way a block can end, earliest first; here the
 * output is read as one run of blocks to its end (the first reading that parses all the way), and
 * only if none does is each block read on its own, the rest staying text. What does not parse is
 * counted as malformed, never dropped. Values are typed by the tool's schema (`xmlArgumentsJson`).
 *
 * @module
 */
import type { ToolSpec } from "../../canonical/mod.ts";
import { isPythonSpace, pythonStrip } from "../python_json.ts";
import type { ToolCallSplit } from "./tool_call_output.ts";
import { type UndeclaredValues, xmlArgumentsJson } from "./xml_arguments.ts";

export const CALL_OPEN = "<tool_call>";
export const CALL_CLOSE = "</tool_call>";
/** Parse attempts per output before giving up on the whole-run parse (adversarial text). */
const BUDGET = 20_000;

/** One parsed block: its name, raw argument values in order, and the index after `</tool_call>`. */
export interface RawCall {
  name: string;
  args: [string, string][];
  end: number;
}

/** The index of the first non-whitespace character (Python's) at or after `i`. */
export function skipSpace(text: string, i: number): number {
  while (i < text.length && isPythonSpace(text.charCodeAt(i))) i++;
  return i;
}

function countOf(text: string, marker: string): number {
  let n = 0;
  for (let i = text.indexOf(marker); i >= 0; i = text.indexOf(marker, i + marker.length)) n++;
  return n;
}

/** A family's reading of one block; `budget` bounds the attempts of a whole parse. */
export abstract class CallBlockReader {
  budget = BUDGET;
  /** How a value the tool's schema does not declare is read (`UndeclaredValues`). */
  readonly undeclared: UndeclaredValues = "string";
  /**
   * @param open the marker that opens a block (`<tool_call>`; Hy3 suffixes its own)
   * @param close the marker that closes it
   */
  constructor(
    readonly text: string,
    readonly open: string = CALL_OPEN,
    readonly close: string = CALL_CLOSE,
  ) {}

  /** A value holding an open marker it does not close (a longer one may close it). */
  #opensCall(raw: string): boolean {
    const open = raw.lastIndexOf(this.open);
    return open >= 0 && raw.indexOf(this.close, open) < 0;
  }

  /** A value holding the boundary between two blocks (a close, whitespace, an open). */
  #holdsBoundary(raw: string): boolean {
    for (let at = raw.indexOf(this.close); at >= 0; at = raw.indexOf(this.close, at + 1)) {
      if (raw.startsWith(this.open, skipSpace(raw, at + this.close.length))) return true;
    }
    return false;
  }

  /** Every way a block starting at `start` (at `<tool_call>`) can end, earliest first. */
  abstract calls(start: number): Generator<RawCall>;

  /**
   * Every way a raw value from `from` can end at a `close` marker after which the markup goes on
   * with one of `continuations` (at `next`), earliest first. A value never reaches into another
   * call: none holds the boundary between two calls, or a `<tool_call>` it does not close.
   */
  protected *valueEnds(
    from: number,
    close: string,
    continuations: readonly string[],
  ): Generator<{ raw: string; next: number }> {
    const t = this.text;
    for (let at = t.indexOf(close, from); at >= 0; at = t.indexOf(close, at + 1)) {
      const raw = t.slice(from, at);
      if (this.#holdsBoundary(raw)) return;
      if (this.#opensCall(raw)) continue;
      const next = skipSpace(t, at + close.length);
      if (!continuations.some((c) => t.startsWith(c, next))) continue;
      yield { raw, next };
      if (this.budget < 0) return;
    }
  }

  /** Blocks from `i` to the end of the text (whitespace between and after), or null. */
  run(i: number): RawCall[] | null {
    const t = this.text;
    i = skipSpace(t, i);
    if (i === t.length) return [];
    if (!t.startsWith(this.open, i)) return null;
    for (const call of this.calls(i)) {
      const rest = this.run(call.end);
      if (rest) return [call, ...rest];
      if (this.budget < 0) return null;
    }
    return null;
  }
}

/**
 * Splits the reader's text into content (trimmed as Python's `str.strip`, as the templates trim
 * what they render) and tool calls. Blocks that do not parse stay in the content and are counted
 * as malformed; with none, so are stray `strayMarker`s.
 *
 * @param strayMarker the format's argument marker, malformed outside any block
 * @param verbatim keep the content as written (a template that renders it untrimmed, Laguna's):
 *   the texts around the blocks joined as they are
 */
export function splitCallBlocks(
  reader: CallBlockReader,
  strayMarker: string,
  tools: readonly ToolSpec[],
  newToolCallId: () => string,
  verbatim = false,
): ToolCallSplit {
  const text = reader.text;
  const first = text.indexOf(reader.open);
  let calls = first < 0 ? [] : reader.run(first);
  /** Texts around the parsed blocks, in order. */
  const texts: string[] = [];
  if (calls) {
    texts.push(text.slice(0, first < 0 ? text.length : first));
  } else {
    // Not one run of blocks to the end: read each block on its own, earliest parse first.
    calls = [];
    let last = 0;
    for (let at = first; at >= 0;) {
      reader.budget = BUDGET;
      const call = reader.calls(at).next().value;
      if (call) {
        texts.push(text.slice(last, at));
        calls.push(call);
        last = call.end;
        at = text.indexOf(reader.open, call.end);
      } else {
        at = text.indexOf(reader.open, at + reader.open.length);
      }
    }
    texts.push(text.slice(last));
  }
  const left = texts.join("");
  const blocks = countOf(left, reader.open);
  return {
    content: verbatim ? left : texts.map(pythonStrip).filter((t) => t !== "").join("\n"),
    toolCalls: calls.map((c) => ({
      id: newToolCallId(),
      name: c.name,
      arguments: xmlArgumentsJson(c.name, c.args, tools, reader.undeclared),
    })),
    malformed: blocks > 0 ? blocks : countOf(left, strayMarker),
  };
}
