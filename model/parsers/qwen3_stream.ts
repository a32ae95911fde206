/**
 * Streaming counterpart of `Qwen3Parser`: reasoning and content deltas while ids arrive.
 *
 * The guarantee: after every `push`, the concatenated reasoning deltas are a prefix of the
 * `reasoning_content` that `Qwen3Parser.parse` gives for the final ids ("" when it has none), and
 * the concatenated text deltas a prefix of its `content`, whatever ids follow. Holding text back
 * is always safe (the caller sends the rest from the complete parse); emitting text the complete
 * parse lacks is a bug. The rules, which follow the complete parser:
 *
 * - The output begins with `<think>`: the ids up to the first `</think>` are reasoning, the rest
 *   is the body. Reasoning drops leading "\n"s and holds trailing "\n"s back until other text
 *   follows (the complete parser strips both ends). When `</think>` arrives the reasoning is
 *   final and sent whole.
 * - The body is content: leading "\n"s dropped, trailing "\n"s held back (the complete parser
 *   removes one before a tool call). Content stops at the first `<tool_call>`, as an id or as
 *   text (a trailing partial `<tool_…` is held back): everything from there, malformed calls
 *   included, comes from the complete parse.
 * - The output does not begin with `<think>`: the complete parser makes the text before a later
 *   `</think>` reasoning, so nothing can be sent until that is settled. If a `<think>` came before
 *   the first `</think>`, the reasoning between them is settled at that `</think>` (sent whole) and
 *   the body streams as above. Otherwise nothing streams at all: before a `</think>` the text may
 *   become reasoning, and after one with no `<think>` before it, a later `<think>` id would make
 *   the complete parser take the whole output as content (`open < close` fails). So with thinking
 *   off (`enable_thinking: false`) or a template that opens `<think>` in the prompt, the answer
 *   arrives at the end.
 * - End-of-turn ids emit nothing; they are held, and become text only if more ids follow (the
 *   complete parser strips only trailing ones).
 *
 * Ids are decoded incrementally (`IncrementalDecoder`), per span the complete parser decodes, so
 * a long output costs O(n) decoding, and a character split across ids is sent once whole.
 *
 * @module
 */
import type { Qwen3TokenIds } from "./qwen3.ts";
import type { StreamDeltas, StreamingOutputParser } from "./output_parser.ts";

export interface Qwen3StreamIds extends Qwen3TokenIds {
  /** `<tool_call>`; content also stops at its text, so it may be absent. */
  toolCall?: number;
}

const REPLACEMENT = 0xfffd;
const NEWLINE = 10;
const TOOL_CALL = "<tool_call>";
/** Window length (ids) past which a decoder that keeps ending in U+FFFD tries to cut it. */
const MAX_WINDOW = 16;
/** Ids kept after such a cut: enough bytes to settle any UTF-8 sequence open at the cut. */
const CUT_TAIL = 4;

/**
 * Decodes ids as they arrive and returns only settled text: a trailing U+FFFD (a character whose
 * bytes continue in the next ids) is held back. Like Hugging Face's `DecodeStream`, it decodes a
 * window that starts at the last id boundary where the text ended cleanly, so each id is decoded
 * a bounded number of times.
 */
export class IncrementalDecoder {
  /** Ids since the last clean boundary. */
  #window: number[] = [];
  /** Chars of `decode(#window)` already returned. */
  #sent = 0;

  constructor(private readonly decode: (ids: number[]) => Promise<string>) {}

  /**
   * Appends `ids` and returns the text they settle. With `final`, the span is complete: returns
   * all the rest (a trailing U+FFFD included) and starts over.
   */
  async push(ids: readonly number[], final = false): Promise<string> {
    if (ids.length === 0 && (!final || this.#window.length === 0)) return "";
    this.#window.push(...ids);
    const text = await this.decode(this.#window);
    if (final || text.length === 0 || text.charCodeAt(text.length - 1) !== REPLACEMENT) {
      const out = text.slice(this.#sent);
      this.#window = [];
      this.#sent = 0;
      return out;
    }
    let end = text.length;
    while (end > this.#sent && text.charCodeAt(end - 1) === REPLACEMENT) end--;
    if (this.#window.length > MAX_WINDOW) {
      // Text that keeps ending in U+FFFD (invalid bytes): cut the window where decoding the two
      // parts gives the same text, with enough bytes after the cut (≥ CUT_TAIL chars) that no
      // later id can change how the bytes at the cut decode.
      const cut = this.#window.length - CUT_TAIL;
      const head = await this.decode(this.#window.slice(0, cut));
      const tail = await this.decode(this.#window.slice(cut));
      if (tail.length >= CUT_TAIL && head + tail === text) {
        end = Math.max(end, head.length);
        const out = text.slice(this.#sent, end);
        this.#window = this.#window.slice(cut);
        this.#sent = end - head.length;
        return out;
      }
    }
    const out = text.slice(this.#sent, end);
    this.#sent = end;
    return out;
  }
}

/** Drops leading "\n"s, holds trailing "\n"s back and, for content, stops at `<tool_call>`. */
class Trimmer {
  #leading = true;
  #held = "";
  stopped = false;

  constructor(private readonly stopAtToolCall: boolean) {}

  /** Text safe to send once `s` (settled decoded text) is appended. */
  push(s: string): string {
    if (this.stopped || s === "") return "";
    let t = this.#held + s;
    if (this.#leading) {
      t = t.replace(/^\n+/, "");
      if (t === "") return "";
      this.#leading = false;
    }
    let end = t.length;
    if (this.stopAtToolCall) {
      const at = t.indexOf(TOOL_CALL);
      if (at >= 0) {
        end = at;
        this.stopped = true;
      } else {
        end -= partialSuffix(t, TOOL_CALL);
      }
    }
    while (end > 0 && t.charCodeAt(end - 1) === NEWLINE) end--;
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

function stripNewlines(s: string): string {
  return s.replace(/^\n+/, "").replace(/\n+$/, "");
}

type Mode =
  | "start" // nothing seen yet
  | "reasoning" // began with `<think>`, before `</think>`
  | "content" // the body: after a settled `</think>`
  | "undecided" // did not begin with `<think>`, no `</think>` yet
  | "done"; // nothing more can be sent

export class Qwen3StreamParser implements StreamingOutputParser {
  #mode: Mode = "start";
  /** End-of-turn ids not followed by anything yet. */
  #pendingEndOfTurn: number[] = [];
  /** Output not beginning with `<think>`: ids after its first `<think>`, once there is one. */
  #opened: number[] | null = null;
  readonly #reasoningIds: IncrementalDecoder;
  readonly #contentIds: IncrementalDecoder;
  readonly #reasoning = new Trimmer(false);
  readonly #content = new Trimmer(true);
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ids: Qwen3StreamIds,
    private readonly decode: (ids: number[]) => Promise<string>,
  ) {
    this.#reasoningIds = new IncrementalDecoder(decode);
    this.#contentIds = new IncrementalDecoder(decode);
  }

  push(ids: number[]): Promise<StreamDeltas> {
    const run = this.#queue.then(() => this.#push(ids));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #push(ids: readonly number[]): Promise<StreamDeltas> {
    const out = { reasoning: "", text: "" };
    const { thinkStart, thinkEnd, toolCall, endOfTurn } = this.ids;
    /** Ids for the decoder of the current mode, decoded once per push. */
    let feed: number[] = [];
    for (const id of ids) {
      if (this.#mode === "done") break;
      if (this.#mode === "start") {
        if (id === thinkStart) {
          this.#mode = "reasoning";
          continue;
        }
        this.#mode = "undecided";
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
          if (id === thinkEnd) {
            out.reasoning += this.#reasoning.push(await this.#reasoningIds.push(feed, true));
            feed = [];
            this.#mode = "content";
          } else {
            feed.push(id);
          }
          break;
        case "content":
          feed.push(...before, id);
          if (id === toolCall) {
            out.text += this.#content.push(await this.#contentIds.push(feed));
            feed = [];
            this.#mode = "done";
          }
          break;
        case "undecided":
          if (this.#opened === null) {
            if (id === thinkStart) this.#opened = [];
            else if (id === thinkEnd) this.#mode = "done";
          } else {
            this.#opened.push(...before);
            if (id === thinkEnd) {
              out.reasoning += stripNewlines(await this.decode(this.#opened));
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
