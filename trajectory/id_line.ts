/**
 * Where a chain's token ids live: one growing `Int32Array` per line of turns, in prompt order
 * (the first turn's prompt, its output, the next turn's bridge and delta, its output, …), so a
 * turn's whole prompt is a view of the line's first `promptLength` ids and is never copied: the
 * backend, the trainer's `requests/next` body and the samples read it where it lies.
 *
 * A line is appended to only at its tip, by the turn that continues it. A turn that extends a
 * turn in the middle of a line (a fork: another chain continues there already) starts a line of
 * its own with a copy of the shared prefix, once. A full line grows by half its size (a copy,
 * amortized over the ids that fill it), and is trimmed to its length when its rollout finishes.
 *
 * @example
 * ```ts
 * import { IdLine } from "./id_line.ts";
 *
 * const line = new IdLine();
 * line.append([151644, 872, 198]); // a first prompt
 * line.append([9707, 151645]); // its output
 * line.view(0, 3); // Int32Array [151644, 872, 198]: the prompt, not a copy
 * line.fork(3).length; // 3: a new line holding the prompt only
 * ```
 *
 * @module
 */

/** Capacity of a line's first buffer beyond what its first ids need. */
const HEADROOM = 256;

export class IdLine {
  #ids: Int32Array;
  #length = 0;

  constructor(capacity = 0) {
    this.#ids = new Int32Array(capacity);
  }

  /** Ids in the line. */
  get length(): number {
    return this.#length;
  }

  /** Bytes the line holds (its capacity). */
  get byteLength(): number {
    return this.#ids.byteLength;
  }

  /** Appends `ids` at the tip. */
  append(ids: ArrayLike<number>): void {
    const end = this.#length + ids.length;
    if (end > this.#ids.length) {
      const grown = new Int32Array(Math.max(end + HEADROOM, Math.ceil(this.#ids.length * 1.5)));
      grown.set(this.#ids.subarray(0, this.#length));
      this.#ids = grown;
    }
    this.#ids.set(ids, this.#length);
    this.#length = end;
  }

  /**
   * The ids from `start` to `end`: a view, valid until the line next grows (a holder keeps the
   * buffer it saw, so a view handed to a backend stays what it was).
   */
  view(start: number, end: number): Int32Array {
    if (!(0 <= start && start <= end && end <= this.#length)) {
      throw new RangeError(`ids ${start}…${end} are outside the line (${this.#length} ids)`);
    }
    return this.#ids.subarray(start, end);
  }

  /** A new line holding a copy of this one's first `length` ids (where a fork starts). */
  fork(length: number): IdLine {
    const line = new IdLine(length + HEADROOM);
    line.append(this.view(0, length));
    return line;
  }

  /** Gives back the capacity beyond the length (the line will not grow again). */
  trim(): void {
    if (this.#ids.length > this.#length) this.#ids = this.#ids.slice(0, this.#length);
  }
}

/** Shared by every turn without ids (black-box turns, turns refused before their prompt). */
export const NO_IDS: IdLine = new IdLine();
