/**
 * Whether a text was seen before, remembered by a fingerprint only: a fixed table of 32-bit
 * fingerprints (one slot per fingerprint's low bits, the latest one kept), so remembering holds
 * no string and allocates nothing. A fingerprint samples at most {@link SAMPLED_CHARS} characters
 * and the length, so two texts can share one, and a slot forgets its text once another takes it:
 * "seen" is a guess, for policies where a wrong guess costs only memory or time (which texts a
 * cache keeps), never a result.
 *
 * @example
 * ```ts
 * import { SeenTexts } from "./seen_texts.ts";
 *
 * const seen = new SeenTexts(1024);
 * seen.see("a tool's output"); // false: first sight
 * seen.see("a tool's output"); // true
 * ```
 *
 * @module
 */

/** Characters a fingerprint reads at most, evenly spaced (a constant cost for any length). */
export const SAMPLED_CHARS = 64;

/** A 32-bit FNV-1a of `text`'s length and of up to {@link SAMPLED_CHARS} of its characters. */
export function fingerprint(text: string): number {
  const n = text.length;
  const step = Math.max(1, Math.floor(n / SAMPLED_CHARS));
  let h = Math.imul(0x811c9dc5 ^ n, 0x01000193);
  for (let i = 0; i < n; i += step) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  // 0 marks an empty slot.
  return (h >>> 0) || 1;
}

export class SeenTexts {
  readonly #slots: Uint32Array;
  readonly #mask: number;

  /** @param slots the table's size, rounded up to a power of two (4 bytes a slot) */
  constructor(slots: number) {
    const size = 2 ** Math.ceil(Math.log2(Math.max(1, slots)));
    this.#slots = new Uint32Array(size);
    this.#mask = size - 1;
  }

  /** Remembers `text`; true when its fingerprint was already in its slot. */
  see(text: string): boolean {
    const f = fingerprint(text);
    const slot = f & this.#mask;
    if (this.#slots[slot] === f) return true;
    this.#slots[slot] = f;
    return false;
  }
}
