/**
 * How the domain writes to its journal (private to `trajectory/`: callers go through
 * `RolloutActions`): `record` is called right where a change happens (so the
 * journal sees changes in the order they happened), and whoever answers a client first awaits
 * `durable()`. Without a journal both cost nothing. A write that fails makes every later
 * `durable()` fail too: nothing is answered as if it were kept when it may not be.
 *
 * @example
 * ```ts
 * import { JournalWriter } from "./journal_writer.ts";
 *
 * const writer = new JournalWriter(); // no journal: a throwaway gateway
 * writer.record({ rollout: "r1", kind: "turn_retried", data: { index: 0 } });
 * await writer.durable(); // resolves at once: nothing to wait for
 * ```
 *
 * @module
 */
import type { Journal } from "./journal.ts";
import type { JournalEvent, RolloutFinishedEvent } from "./journal_events.ts";
import type { Sample } from "../samples/mod.ts";
import type { TokenRowField, TokenRows } from "../../generation/mod.ts";
import { MemoryTokenRowStore, type TokenRowStore } from "../token_rows/mod.ts";
import type { ImageStore } from "../image_store.ts";

/** The journal could not keep a change (disk full, file removed …). */
export class JournalError extends Error {
  override name = "JournalError";
}

export class JournalWriter {
  readonly #pending = new Set<Promise<void>>();
  #failure: JournalError | null = null;
  /** While the journal is replayed, what the replay does is not written again. */
  #replaying = false;

  /** Where turns' token rows go: the journal, else memory (a throwaway gateway). */
  readonly rows: TokenRowStore;
  /** Where the images turns show go: the journal's (or the one given), else none. */
  readonly images?: ImageStore;

  constructor(readonly journal?: Journal, images: ImageStore | undefined = journal) {
    this.rows = journal ?? new MemoryTokenRowStore();
    this.images = images;
  }

  /** Why the journal stopped keeping changes, once a write failed (readiness reports it). */
  get failure(): JournalError | null {
    return this.#failure;
  }

  /** Runs `replay` with recording off (restoring from the journal itself). */
  async replaying(replay: () => Promise<void>): Promise<void> {
    this.#replaying = true;
    try {
      await replay();
    } finally {
      this.#replaying = false;
    }
  }

  /**
   * Records a change now; `durable()` waits for it. After a failed write nothing more is written:
   * the journal stays a replayable prefix of what happened, holding all that was acknowledged.
   */
  record(event: JournalEvent): void {
    if (!this.journal || this.#replaying || this.#failure) return;
    this.#track(this.journal.record(event));
  }

  /** Keeps a turn's token rows; `durable()` waits for them (not while replaying: they are kept). */
  putRows(rollout: string, turn: string, field: TokenRowField, rows: TokenRows): void {
    if (this.#replaying || (this.journal && this.#failure)) return;
    this.#track(this.rows.putRows(rollout, turn, field, rows));
  }

  /** Forgets a deleted rollout's events (and its token rows, unless logged samples use them). */
  forget(rollout: string): void {
    if (this.rows instanceof MemoryTokenRowStore) this.rows.forget(rollout);
    if (this.journal && !this.#failure) this.#track(this.journal.forget(rollout));
  }

  /** Marks a rollout expired (kept, not restored). */
  expire(rollout: string): void {
    if (this.journal && !this.#failure) this.#track(this.journal.expire(rollout));
  }

  /** Refuses new work once the journal failed: it could not be kept. */
  refuseIfFailed(): void {
    if (this.#failure) throw this.#failure;
  }

  /** Records a finishing rollout and its samples at once; resolves with their cursors. */
  async finish(event: RolloutFinishedEvent, samples: readonly Sample[]): Promise<number[]> {
    await this.durable();
    const cursors = this.journal!.finish(event, samples);
    this.#track(cursors.then(() => {}));
    try {
      return await cursors;
    } catch (e) {
      throw this.#failure ?? new JournalError(`the journal failed: ${(e as Error).message}`);
    }
  }

  /** Resolves once every change recorded so far is durable. */
  async durable(): Promise<void> {
    if (this.#pending.size > 0) await Promise.all(this.#pending);
    if (this.#failure) throw this.#failure;
  }

  #track(write: Promise<void>): void {
    const tracked = write.catch((e) => {
      this.#failure ??= new JournalError(`the journal failed: ${(e as Error).message}`);
      console.error(`rollgate: ${this.#failure.message}`);
    }).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }
}
