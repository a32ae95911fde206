/**
 * Reasoning in `<think>…</think>` tags followed by content that stops at a tool-call marker:
 * the output shape of Qwen3, Qwen3.5/3.6, GLM, DeepSeek (thinking), MiniMax M2 and Laguna. One set of
 * rules, `ThinkTagRules`, drives both the complete split (`splitReasoning`) and the streaming
 * parser (`ThinkStreamParser`), so what streams early is always a prefix of the complete parse.
 *
 * Complete split of the sampled ids (trailing end-of-turn ids removed):
 *
 * - `promptOpensReasoning` (the generation prompt ends in `<think>\n`): reasoning is everything
 *   before the first `</think>` (a leading `<think>` skipped), or everything when the output has
 *   none (cut off while reasoning). The body follows `</think>`. With `toolCallClosesReasoning`, a
 *   tool-call id before any `</think>` also ends the reasoning, and the body starts with it: a
 *   policy that calls a tool without closing its reasoning still calls the tool (instead of the
 *   call vanishing into reasoning).
 * - Otherwise, with `open` the first `<think>` and `close` the first `</think>`: if `close ≥ 0`
 *   and (`open < 0` or `open < close`) the reasoning is between them (from the start when
 *   `open < 0`); if `open == 0` and there is no close, the output was cut off while reasoning;
 *   anything else is all body. With `firstCloseEndsReasoning`, the reasoning is everything before
 *   the first `</think>` wherever a `<think>` is (a leading one skipped).
 * - Reasoning is trimmed at both ends and the body at its start, by `trim`: `"newlines"` (Qwen3's
 *   parser), `"whitespace"` (Python's `str.strip`, for templates that `|trim` what they render)
 *   or `"none"` (templates that render the sampled text verbatim: Kimi K2, DeepSeek).
 *
 * Streaming (`ThinkStreamParser`), following those rules:
 *
 * - In reasoning (the output began with `<think>`, or the prompt opened it): leading trim
 *   characters dropped, trailing ones held back until other text follows. At `</think>` the
 *   reasoning is final and sent whole.
 * - The body is content: leading trim characters dropped, trailing ones held back. Content stops
 *   at the first tool-call marker, as an id or as text (a trailing partial marker is held back):
 *   everything from there, malformed calls included, comes from the complete parse.
 * - The prompt did not open reasoning and the output does not begin with `<think>`: the text
 *   before a later `</think>` may still become reasoning, so nothing is sent until that is
 *   settled. If a `<think>` came before the first `</think>`, the reasoning is settled there (sent
 *   whole) and the body streams. With `firstCloseEndsReasoning` everything before the first
 *   `</think>` is sent as the reasoning there, and the body streams. Otherwise nothing streams at
 *   all (a later `<think>` id would make the complete parse take the whole output as content).
 * - End-of-turn ids emit nothing; they are held, and become text only if more ids follow.
 *
 * Ids are decoded incrementally, per span the complete split decodes, so a long output costs O(n)
 * decoding and a character split across ids is sent once, whole.
 *
 * @module
 */
import {
  IncrementalDecoder,
  type StreamDeltas,
  type StreamingOutputParser,
} from "../parsers/mod.ts";
import { isPythonSpace } from "../python_json.ts";

export interface ThinkTagRules {
  /** `<think>` and `</think>`; -1 for both in a format without reasoning (all output is body). */
  thinkStart: number;
  thinkEnd: number;
  /** Ids that end a turn (stripped when trailing, text when more follows). */
  endOfTurn: readonly number[];
  /** The generation prompt ends inside reasoning (`<think>\n`). */
  promptOpensReasoning: boolean;
  /**
   * What is trimmed around reasoning and content: newlines, Python's whitespace, or nothing
   * (a template that renders the sampled text verbatim, as Kimi K2's and DeepSeek's).
   */
  trim: "newlines" | "whitespace" | "none";
  /** Where content stops in a stream: the text of the tool-call marker, and its id if any. */
  toolCallStart: { text: string; id?: number };
  /** With `promptOpensReasoning`: the tool-call id ends unclosed reasoning. */
  toolCallClosesReasoning?: boolean;
  /**
   * Without `promptOpensReasoning`: everything before the first `</think>` is reasoning (a
   * leading `<think>` skipped), and any other `<think>` is text (DeepSeek V3.1 thinking: the
   * prompt opened `<think>` after a user message, so the output never writes one).
   */
  firstCloseEndsReasoning?: boolean;
}

/** The reasoning/body split of one output, decoded. */
export interface ReasoningSplit {
  /** Trimmed reasoning, or undefined when the output has none. */
  reasoning?: string;
  /** Everything after the reasoning, start trimmed. */
  body: string;
  /** Sampled ids that belong to reasoning (think tags included). */
  reasoningTokens: number;
}

function trimTest(trim: ThinkTagRules["trim"]): (code: number) => boolean {
  if (trim === "none") return () => false;
  return trim === "newlines" ? (c) => c === 10 : isPythonSpace;
}

function trimStart(s: string, test: (c: number) => boolean): string {
  let a = 0;
  while (a < s.length && test(s.charCodeAt(a))) a++;
  return s.slice(a);
}

function trimEnd(s: string, test: (c: number) => boolean): string {
  let b = s.length;
  while (b > 0 && test(s.charCodeAt(b - 1))) b--;
  return s.slice(0, b);
}

/** The sampled ids without trailing end-of-turn ids. */
export function withoutEndOfTurn(ids: readonly number[], endOfTurn: readonly number[]): number[] {
  let end = ids.length;
  while (end > 0 && endOfTurn.includes(ids[end - 1])) end--;
  return ids.slice(0, end);
}

/**
 * Splits sampled ids into reasoning and body (see the module doc for the rules).
 *
 * @example
 * ```ts
 * import { splitReasoning, type ThinkTagRules } from "./think_tags.ts";
 * declare const decode: (ids: number[]) => Promise<string>;
 *
 * const rules: ThinkTagRules = {
 *   thinkStart: 151667,
 *   thinkEnd: 151668,
 *   endOfTurn: [151645],
 *   promptOpensReasoning: true,
 *   trim: "whitespace",
 *   toolCallStart: { text: "<tool_call>", id: 151657 },
 * };
 * const split = await splitReasoning([40, 151668, 9707, 151645], rules, decode);
 * // split.reasoning: the text of [40]; split.body: of [9707]
 * ```
 */
export async function splitReasoning(
  sampled: readonly number[],
  rules: ThinkTagRules,
  decode: (ids: number[]) => Promise<string>,
): Promise<ReasoningSplit> {
  const ids = withoutEndOfTurn(sampled, rules.endOfTurn);
  const test = trimTest(rules.trim);
  const trimBoth = (s: string) => trimEnd(trimStart(s, test), test);
  const close = ids.indexOf(rules.thinkEnd);
  const open = ids.indexOf(rules.thinkStart);
  let from = -1, to = -1, reasoningTokens = 0;
  if (rules.promptOpensReasoning) {
    from = ids[0] === rules.thinkStart ? 1 : 0;
    const call = rules.toolCallClosesReasoning && rules.toolCallStart.id !== undefined
      ? ids.indexOf(rules.toolCallStart.id, from)
      : -1;
    if (call >= 0 && (close < 0 || call < close)) {
      // The body starts at the tool call itself.
      const reasoning = trimBoth(await decode(ids.slice(from, call)));
      return { reasoning, body: await decode(ids.slice(call)), reasoningTokens: call };
    }
    to = close >= 0 ? close : ids.length;
    reasoningTokens = close >= 0 ? close + 1 : ids.length;
  } else if (close >= 0 && (open < 0 || open < close || rules.firstCloseEndsReasoning)) {
    from = open === 0 ? 1 : open < 0 || rules.firstCloseEndsReasoning ? 0 : open + 1;
    to = close;
    reasoningTokens = close + 1;
  } else if (open === 0) {
    from = 1;
    to = ids.length;
    reasoningTokens = ids.length;
  }
  if (from < 0) return { body: trimStart(await decode(ids), test), reasoningTokens: 0 };
  return {
    reasoning: trimBoth(await decode(ids.slice(from, to))),
    body: trimStart(await decode(ids.slice(to + 1)), test),
    reasoningTokens,
  };
}

/** Drops leading trim characters, holds trailing ones back and, for content, stops at a marker. */
class Trimmer {
  #leading = true;
  #held = "";
  stopped = false;

  constructor(
    private readonly test: (code: number) => boolean,
    private readonly marker: string | null,
  ) {}

  /** Text safe to send once `s` (settled decoded text) is appended. */
  push(s: string): string {
    if (this.stopped || s === "") return "";
    let t = this.#held + s;
    if (this.#leading) {
      t = trimStart(t, this.test);
      if (t === "") return "";
      this.#leading = false;
    }
    let end = t.length;
    if (this.marker !== null) {
      const at = t.indexOf(this.marker);
      if (at >= 0) {
        end = at;
        this.stopped = true;
      } else {
        end -= partialSuffix(t, this.marker);
      }
    }
    while (end > 0 && this.test(t.charCodeAt(end - 1))) end--;
    this.#held = t.slice(end);
    return t.slice(0, end);
  }
}

/** Length of the longest proper prefix of `marker` that `t` ends with. */
function partialSuffix(t: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, t.length); n > 0; n--) {
    if (t.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}

type Mode =
  | "start" // nothing seen yet
  | "reasoning" // inside reasoning, before `</think>`
  | "content" // the body: after a settled `</think>`
  | "undecided" // did not begin with `<think>`, prompt did not open it, no `</think>` yet
  | "done"; // nothing more can be sent

export class ThinkStreamParser implements StreamingOutputParser {
  #mode: Mode = "start";
  /** End-of-turn ids not followed by anything yet. */
  #pendingEndOfTurn: number[] = [];
  /** Output not beginning with `<think>`: ids after its first `<think>`, once there is one. */
  #opened: number[] | null = null;
  /** With `firstCloseEndsReasoning`, before any `<think>`: every id so far. */
  #unopened: number[] = [];
  readonly #reasoningIds: IncrementalDecoder;
  readonly #contentIds: IncrementalDecoder;
  readonly #reasoning: Trimmer;
  readonly #content: Trimmer;
  readonly #test: (code: number) => boolean;
  readonly #toolCallCloses: boolean;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly rules: ThinkTagRules,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {
    this.#reasoningIds = new IncrementalDecoder(decode);
    this.#contentIds = new IncrementalDecoder(decode);
    this.#test = trimTest(rules.trim);
    this.#toolCallCloses = rules.promptOpensReasoning && rules.toolCallClosesReasoning === true;
    this.#reasoning = new Trimmer(this.#test, null);
    this.#content = new Trimmer(this.#test, rules.toolCallStart.text);
  }

  push(ids: number[]): Promise<StreamDeltas> {
    const run = this.#queue.then(() => this.#push(ids));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #push(ids: readonly number[]): Promise<StreamDeltas> {
    const out = { reasoning: "", text: "" };
    const { thinkStart, thinkEnd, endOfTurn } = this.rules;
    const toolCallId = this.rules.toolCallStart.id;
    /** Ids for the decoder of the current mode, decoded once per push. */
    let feed: number[] = [];
    for (const id of ids) {
      if (this.#mode === "done") break;
      if (this.#mode === "start") {
        if (id === thinkStart) {
          this.#mode = "reasoning";
          continue;
        }
        this.#mode = this.rules.promptOpensReasoning
          ? "reasoning"
          : thinkStart < 0 && thinkEnd < 0
          ? "content"
          : "undecided";
      }
      if (endOfTurn.includes(id)) {
        this.#pendingEndOfTurn.push(id);
        continue;
      }
      // End-of-turn ids followed by more are text of the span they are in.
      const before = this.#pendingEndOfTurn;
      this.#pendingEndOfTurn = [];
      switch (this.#mode) {
        case "reasoning":
          feed.push(...before);
          if (id === thinkEnd || (id === toolCallId && this.#toolCallCloses)) {
            out.reasoning += this.#reasoning.push(await this.#reasoningIds.push(feed, true));
            // A tool call that ends reasoning is the body's first id (content stops there).
            feed = id === thinkEnd ? [] : [id];
            this.#mode = "content";
          } else {
            feed.push(id);
          }
          break;
        case "content":
          feed.push(...before, id);
          if (id === toolCallId) {
            out.text += this.#content.push(await this.#contentIds.push(feed));
            feed = [];
            this.#mode = "done";
          }
          break;
        case "undecided":
          if (this.rules.firstCloseEndsReasoning) {
            this.#unopened.push(...before);
            if (id === thinkEnd) {
              const text = await this.decode(this.#unopened);
              out.reasoning += trimEnd(trimStart(text, this.#test), this.#test);
              this.#mode = "content";
            } else {
              this.#unopened.push(id);
            }
          } else if (this.#opened === null) {
            if (id === thinkStart) this.#opened = [];
            else if (id === thinkEnd) this.#mode = "done";
          } else {
            this.#opened.push(...before);
            if (id === thinkEnd) {
              const text = await this.decode(this.#opened);
              out.reasoning += trimEnd(trimStart(text, this.#test), this.#test);
              this.#opened = null;
              this.#mode = "content";
            } else {
              this.#opened.push(id);
            }
          }
          break;
      }
    }
    if (this.#mode === "reasoning") {
      out.reasoning += this.#reasoning.push(await this.#reasoningIds.push(feed));
    } else if (this.#mode === "content") {
      out.text += this.#content.push(await this.#contentIds.push(feed));
      if (this.#content.stopped) this.#mode = "done";
    }
    return out;
  }
}
