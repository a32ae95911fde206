/**
 * Bounds on how many texts are tokenized at once: every native encode goes through a lane as
 * wide as the cores ({@link NATIVE_ENCODES}), and long texts through a narrower one first.
 *
 * The native tokenizer encodes on a pool of threads that grows with demand, so 200 cold first
 * turns of 80k tokens each start 200 encodes at once: they take every core, and the event loop
 * and the warm turns' short encodes wait for a share of the CPU (issue 11 measured 25–43 s). Long
 * encodes go through this lane instead, one text after another up to its width (the cores but
 * one), so at least one core stays for the warm turns and a cold turn waits only for other cold
 * turns.
 *
 * @example
 * ```ts
 * import { EncodeLane } from "./encode_lane.ts";
 *
 * const lane = new EncodeLane(1);
 * const [a, b] = await Promise.all([lane.run(async () => 1), lane.run(async () => 2)]);
 * a + b; // 3, one after the other
 * ```
 *
 * @module
 */

export class EncodeLane {
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  /** @param width how many may run at once (at least 1) */
  constructor(readonly width: number) {
    if (!(width >= 1)) throw new RangeError(`an encode lane needs a width of at least 1: ${width}`);
  }

  /** How many wait for their turn. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `work` once fewer than `width` others run; in order of arrival. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    // The wait ends when a running encode ends, and native encodes always end.
    if (this.#running >= this.width) await new Promise<void>((go) => this.#waiting.push(go));
    else this.#running++;
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next(); // the slot passes on, still counted as running
      else this.#running--;
    }
  }
}

/** The process's lane for long encodes: every core but one (at least one). */
export const LONG_ENCODES: EncodeLane = new EncodeLane(
  Math.max(1, (navigator.hardwareConcurrency ?? 2) - 1),
);

/**
 * The process's lane for every native encode, short or long: as wide as the cores. More at once
 * buys no speed, and each encode in flight holds its text and its encoding in native memory:
 * 1,000 first turns started at once took the native heap to gigabytes (issue 20).
 */
export const NATIVE_ENCODES: EncodeLane = new EncodeLane(
  Math.max(1, navigator.hardwareConcurrency ?? 2),
);
