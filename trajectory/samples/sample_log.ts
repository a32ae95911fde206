/**
 * The log of finished samples behind `GET /api/samples/stream`: every sample gets a cursor (1, 2,
 * 3, … in the order rollouts finished), so a trainer that reconnects with the last cursor it saw
 * gets every later sample exactly once. The journal keeps the whole log; without it,
 * {@link MemorySampleLog} keeps the latest ones.
 *
 * @example
 * ```ts
 * import type { Sample } from "../mod.ts";
 * import { MemorySampleLog } from "./sample_log.ts";
 *
 * const log = new MemorySampleLog(100);
 * const cursors = await log.append([{ rollout_id: "r1" } as Sample]);
 * (await log.after(0, 10)).map((e) => e.cursor); // cursors, i.e. [1]
 * ```
 *
 * @module
 */
import type { Sample } from "./sample.ts";

/** A sample with its place in the log. */
export interface LoggedSample {
  cursor: number;
  sample: Sample;
}

export interface SampleLog {
  /** Appends samples in order; resolves with their cursors once they are stored. */
  append(samples: readonly Sample[]): Promise<number[]>;
  /** Up to `limit` samples after `cursor`, oldest first. */
  after(cursor: number, limit: number): Promise<LoggedSample[]>;
  /** The cursor of the oldest sample still kept, or the next cursor when none is kept. */
  oldest(): Promise<number>;
  /** The cursor of the newest sample logged; 0 before the first. */
  newest(): Promise<number>;
  /** Rows found damaged on disk and skipped so far (a log kept on disk); reported in `/metrics`. */
  readonly damagedSamples?: number;
}

export const DEFAULT_SAMPLES_KEPT_IN_MEMORY = 1000;

/** The latest `keep` samples in memory (the sample log of a gateway without a journal). */
export class MemorySampleLog implements SampleLog {
  readonly #entries: LoggedSample[] = [];
  #next = 1;

  constructor(readonly keep = DEFAULT_SAMPLES_KEPT_IN_MEMORY) {}

  append(samples: readonly Sample[]): Promise<number[]> {
    const cursors = samples.map((sample) => {
      const cursor = this.#next++;
      this.#entries.push({ cursor, sample });
      return cursor;
    });
    if (this.#entries.length > this.keep) {
      this.#entries.splice(0, this.#entries.length - this.keep);
    }
    return Promise.resolve(cursors);
  }

  after(cursor: number, limit: number): Promise<LoggedSample[]> {
    const first = this.#entries[0]?.cursor ?? this.#next;
    const start = Math.max(0, cursor + 1 - first);
    return Promise.resolve(this.#entries.slice(start, start + limit));
  }

  oldest(): Promise<number> {
    return Promise.resolve(this.#entries[0]?.cursor ?? this.#next);
  }

  newest(): Promise<number> {
    return Promise.resolve(this.#next - 1);
  }
}
