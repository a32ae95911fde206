/**
 * Decoding sampled ids as they arrive: only settled text is returned, a character whose bytes
 * continue in later ids is held back (as Hugging Face's `DecodeStream` does).
 *
 * @example
 * ```ts
 * import { IncrementalDecoder } from "./incremental_decoder.ts";
 * declare const decode: (ids: number[]) => Promise<string>;
 *
 * const decoder = new IncrementalDecoder(decode);
 * let text = await decoder.push([9707]);
 * text += await decoder.push([], true); // the rest, at the end of the span
 * ```
 *
 * @module
 */

const REPLACEMENT = 0xfffd;
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
