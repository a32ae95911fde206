/**
 * The output of Kimi K2.5 / K2.6, read from decoded text (its `<think>` and `</think>` are text,
 * not added tokens, and `</think>` tokenizes differently with what follows it, so no id marks
 * where reasoning ends):
 *
 * - thinking on (the prompt opened `<think>`): reasoning is everything before the first
 *   `</think>`; a tool-calls section before any `</think>` ends it too (the calls still count);
 *   with neither, the output was cut off while reasoning and is all reasoning. Thinking off: no
 *   reasoning, all body.
 * - The body is Kimi K2's: content verbatim, then a tool-calls section with the policy's own call
 *   ids (`splitKimiToolCalls`).
 *
 * Trailing end-of-turn ids are dropped; end ids followed by more ids are text. The streaming
 * parser follows the same rules on the text decoded so far: it sends reasoning and content up to
 * where a `</think>` or section marker could still begin, and nothing after the section marker
 * (the calls come from the complete parse).
 *
 * @module
 */
import type { AssistantMessage } from "../../../canonical/mod.ts";
import {
  IncrementalDecoder,
  type OutputParser,
  type ParsedOutput,
  type StreamDeltas,
  type StreamingOutputParser,
} from "../../parsers/mod.ts";
import type { OutputFormat } from "../family.ts";
import { splitKimiToolCalls } from "../kimi_k2/mod.ts";

const THINK_END = "</think>";
const SECTION = "<|tool_calls_section_begin|>";

/** Where reasoning ends and the body starts in decoded output, or null while still reasoning. */
function reasoningEnd(text: string, from = 0): { end: number; body: number } | null {
  const close = text.indexOf(THINK_END, from);
  const section = text.indexOf(SECTION, from);
  if (section >= 0 && (close < 0 || section < close)) return { end: section, body: section };
  return close < 0 ? null : { end: close, body: close + THINK_END.length };
}

/** The length of the longest end of `text` (after `from`) that begins one of `markers`. */
function partialMarker(text: string, from: number, markers: readonly string[]): number {
  let longest = 0;
  for (const marker of markers) {
    for (let n = Math.min(marker.length - 1, text.length - from); n > longest; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}

class KimiK25Parser implements OutputParser {
  readonly name = "kimi_k2";
  constructor(
    private readonly thinking: boolean,
    private readonly stop: readonly number[],
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {}

  async parse(ids: readonly number[], _newToolCallId: () => string): Promise<ParsedOutput> {
    let n = ids.length;
    while (n > 0 && this.stop.includes(ids[n - 1])) n--;
    const kept = ids.slice(0, n);
    const text = await this.decode(kept);
    let body = text, reasoningTokens = 0;
    const message: AssistantMessage = { role: "assistant", content: "" };
    if (this.thinking) {
      const cut = reasoningEnd(text) ?? { end: text.length, body: text.length };
      message.reasoning_content = text.slice(0, cut.end);
      body = text.slice(cut.body);
      reasoningTokens = await this.#idsThrough(kept, cut.body);
    }
    const split = splitKimiToolCalls(body);
    message.content = split.content;
    if (split.toolCalls.length > 0) message.tool_calls = split.toolCalls;
    return { message, malformedToolCalls: split.malformed, reasoningTokens };
  }

  /** How many of `ids` it takes to decode `chars` characters (reasoning and its `</think>`). */
  async #idsThrough(ids: number[], chars: number): Promise<number> {
    let lo = 0, hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((await this.decode(ids.slice(0, mid))).length >= chars) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

class KimiK25Stream implements StreamingOutputParser {
  readonly #decoder: IncrementalDecoder;
  #text = "";
  /** End ids not yet known to be trailing. */
  #held: number[] = [];
  #inReasoning: boolean;
  /** Chars of `#text` sent (reasoning, then content); where the body starts; past the section. */
  #sent = 0;
  #body = 0;
  #done = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    thinking: boolean,
    private readonly stop: readonly number[],
    decode: (ids: number[]) => Promise<string>,
  ) {
    this.#decoder = new IncrementalDecoder(decode);
    this.#inReasoning = thinking;
  }

  push(ids: number[]): Promise<StreamDeltas> {
    const next = this.#queue.then(() => this.#push(ids));
    this.#queue = next;
    return next;
  }

  async #push(ids: number[]): Promise<StreamDeltas> {
    const feed: number[] = [];
    for (const id of ids) {
      if (this.stop.includes(id)) {
        this.#held.push(id);
        continue;
      }
      feed.push(...this.#held, id);
      this.#held = [];
    }
    this.#text += await this.#decoder.push(feed);
    const out: StreamDeltas = { reasoning: "", text: "" };
    const text = this.#text;
    if (this.#inReasoning) {
      const cut = reasoningEnd(text, Math.max(0, this.#sent - SECTION.length));
      const end = cut?.end ?? text.length - partialMarker(text, this.#sent, [THINK_END, SECTION]);
      out.reasoning = text.slice(this.#sent, end);
      this.#sent = end;
      if (!cut) return out;
      this.#inReasoning = false;
      this.#body = this.#sent = cut.body;
    }
    if (this.#done) return out;
    const section = text.indexOf(SECTION, Math.max(this.#body, this.#sent - SECTION.length));
    const end = section >= 0 ? section : text.length - partialMarker(text, this.#sent, [SECTION]);
    out.text = text.slice(this.#sent, end);
    this.#sent = end;
    this.#done = section >= 0;
    return out;
  }
}

/**
 * Parser and streaming parser of the K2.5 output.
 *
 * @param thinking the generation prompt opened `<think>`
 * @param stop the ids that end a turn (`<|im_end|>`, `[EOS]`)
 */
export function kimiK25OutputFormat(
  thinking: boolean,
  stop: readonly number[],
  decode: (ids: number[]) => Promise<string>,
): OutputFormat {
  return {
    parser: new KimiK25Parser(thinking, stop, decode),
    streamingParser: () => new KimiK25Stream(thinking, stop, decode),
  };
}
