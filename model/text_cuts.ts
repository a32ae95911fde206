/**
 * Where long text can be cut and tokenized piece by piece with the same ids as in one go, so a
 * megabyte tool output costs a few times its size to tokenize instead of hundreds (a native
 * encoding keeps offsets and token strings per id: 32 MB of text took ~5 GB at once).
 *
 * A cut is token-safe where the tokenizer's pre-tokenizer splits anyway. For the byte-level BPE
 * tokenizers with a GPT-style split regex (Qwen, Llama 3, DeepSeek …) two places always qualify:
 *
 * - after a newline, before a letter: no pre-token runs from a newline into a letter, and a
 *   letter starting a word takes at most one non-newline character in front of it;
 * - between a letter and a space followed by a letter (`word| word`): the space opens the next
 *   pre-token.
 *
 * Neither composes under NFC across the cut. Whether a tokenizer agrees is checked when the model
 * loads ({@link cutsAreSafe}); a tokenizer that does not is never cut.
 *
 * @example
 * ```ts
 * import { chunkText } from "./text_cuts.ts";
 *
 * chunkText("alpha beta\ngamma delta", 6); // ["alpha", " beta\n", "gamma", " delta"]
 * ```
 *
 * @module
 */

const LETTER = /\p{L}/u;

function isLetter(ch: string | undefined): boolean {
  return ch !== undefined && LETTER.test(ch);
}

/** Whether `text` may be cut before index `i`. */
function safeCut(text: string, i: number): boolean {
  const before = text[i - 1], at = text[i];
  if (before === "\n") return isLetter(at);
  return at === " " && isLetter(before) && isLetter(text[i + 1]);
}

/**
 * `text` in pieces of about `size` characters, cut only at safe places (a piece grows past `size`
 * until one comes; text without any stays whole).
 */
export function chunkText(text: string, size: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > size) {
    let cut = -1;
    // The last safe place in the second half of the window, else the first after it.
    for (let i = start + size; i > start + size / 2; i--) {
      if (safeCut(text, i)) {
        cut = i;
        break;
      }
    }
    for (let i = start + size + 1; cut < 0 && i < text.length; i++) {
      if (safeCut(text, i)) cut = i;
    }
    if (cut < 0) break;
    pieces.push(text.slice(start, cut));
    start = cut;
  }
  pieces.push(text.slice(start));
  return pieces;
}

/** Text with every kind of safe cut, and near-misses that are not cuts. */
const PROBE = [
  "def f(x):\n    return x\nresult = f(2)\n",
  "Über straße\nçava naïve café\n\n\nword\tword  word 's 've 'LL\n",
  "数字 字符\n中文 text\nx = 1.5e3 // comment\n  indented\n",
  "Hello, world! It's a test.\nAnother line\r\nwindows line\n- bullet\n",
  "ᄀ\u1161 한국어\n\u0301accent e\u0301 done\n",
].join("");

/** Checks on a probe text that cutting at the safe places leaves this tokenizer's ids unchanged. */
export async function cutsAreSafe(encode: (text: string) => Promise<number[]>): Promise<boolean> {
  const whole = await encode(PROBE);
  const pieces: number[] = [];
  for (const piece of chunkText(PROBE, 2)) for (const id of await encode(piece)) pieces.push(id);
  return whole.length === pieces.length && whole.every((id, i) => id === pieces[i]);
}
