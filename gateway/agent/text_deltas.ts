/**
 * How answer text goes out in streaming deltas, the same for every protocol: pieces of at most
 * {@link DELTA_SIZE} code points (clients are written for token-sized deltas and some mishandle
 * one huge delta), and, when the complete answer arrives, only what was not streamed yet.
 *
 * @example
 * ```ts
 * import { splitDeltas, unsentText } from "./text_deltas.ts";
 *
 * splitDeltas("aaa bbb ccc", 5); // ["aaa ", "bbb ", "ccc"]
 * unsentText("Hello, world", "Hello"); // ", world"
 * ```
 *
 * @module
 */

/** Largest delta, in code points. */
export const DELTA_SIZE = 64;

/**
 * Splits text into pieces of at most `max` code points, cutting after the last whitespace of a
 * piece when there is one, as a real stream would. Splitting by code point keeps surrogate pairs
 * together, so every piece is valid UTF-16 on its own (clients in other languages decode each
 * chunk separately). Concatenating the pieces gives `text`; an empty string gives none.
 */
export function splitDeltas(text: string, max = DELTA_SIZE): string[] {
  const chars = Array.from(text);
  const pieces: string[] = [];
  let start = 0;
  while (start < chars.length) {
    let end = Math.min(start + max, chars.length);
    if (end < chars.length) {
      for (let cut = end; cut > start + 1; cut--) {
        if (/\s/.test(chars[cut - 1])) {
          end = cut;
          break;
        }
      }
    }
    pieces.push(chars.slice(start, end).join(""));
    start = end;
  }
  return pieces;
}

/**
 * What `full` adds after the already-streamed `sent`. Streamed text is a prefix of the final
 * answer by the streaming parser's guarantee; if it ever is not, nothing more is sent (the client
 * cannot take text back).
 */
export function unsentText(full: string, sent: string): string {
  return full.startsWith(sent) ? full.slice(sent.length) : "";
}
