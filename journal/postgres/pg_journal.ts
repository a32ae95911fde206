/**
 * The journal on PostgreSQL, shared by every replica of a gateway: the `Journal` contract of
 * `trajectory/` (events in call order, durable before anyone is answered; samples with one
 * gateway-wide cursor), plus ownership: a replica writes a rollout's events only while it owns
 * the rollout at the epoch it claimed, checked in the very statement that writes (the rollout's
 * row is locked for share, so a takeover waits for the write or the write sees the takeover).
 * A write the database refuses for that reason is a {@link RolloutFencedError}.
 *
 * Events recorded while a write is on its way go in the next one (a group commit: one
 * statement for many events, in call order). A write that fails because the connection broke
 * (the database restarted) is sent again until `retryMs` passes; each event has a unique id, so
 * one that did land is not written twice.
 *
 * @module
 */
import type { Sql } from "postgres";
import type {
  Journal,
  JournaledRollout,
  JournalEvent,
  LoggedSample,
  Sample,
} from "../../trajectory/mod.ts";
import type { TokenRowField, TokenRows } from "../../generation/mod.ts";
import { unpackArrays } from "../array_codec.ts";
import { type Queued, RolloutFencedError, writeEvents } from "./event_rows.ts";
import { appendSamples, newestCursor, oldestCursor, samplesAfter } from "./sample_rows.ts";
import { withdrawPending } from "./request_rows.ts";
import { REQUEST_EVENT_KINDS } from "./request_events.ts";
import { SAMPLES_CHANNEL } from "./channels.ts";
import { forgetTokenRows, putTokenRows, readTokenRows } from "./token_rows.ts";
import { TokenRowCache } from "./token_row_cache.ts";
import { retried } from "./retried_write.ts";
import { checkRow, rowSum } from "../row_checksum.ts";
import { SharedValueHashes } from "../shared_values.ts";
import { putImageRow, readImageRow } from "./image_rows.ts";

import type { PgJournalOptions } from "./pg_journal_options.ts";

const DEFAULT_ROW_CACHE_BYTES = 64 << 20;

function rowKey(turn: string, field: TokenRowField): string {
  return `${field}\n${turn}`;
}

/** Most events one statement writes. */
const BATCH = 200;

export class PgJournal implements Journal {
  readonly replica: string;
  readonly #retryMs: number;
  readonly #attemptMs: number;
  /** Epochs of the rollouts this replica owns. */
  readonly #owned = new Map<string, number>();
  readonly #queue: Queued[] = [];
  #flushing: Promise<void> | null = null;
  #counter = 0;
  readonly #sharedKnown = new Set<string>();
  readonly #sharedHashes = new SharedValueHashes();
  /** Images this replica wrote or found in the table: sent again, they cost a lookup. */
  readonly #imagesKnown = new Set<string>();
  readonly #rowCache: TokenRowCache;

  constructor(readonly sql: Sql, options: PgJournalOptions) {
    this.replica = options.replica;
    this.#retryMs = options.retryMs ?? 15_000;
    this.#attemptMs = options.attemptMs ?? 10_000;
    this.#rowCache = new TokenRowCache(options.rowCacheBytes ?? DEFAULT_ROW_CACHE_BYTES);
  }

  /** Where the journal is, for messages. */
  get path(): string {
    const o = this.sql.options;
    return `postgres://${o.host?.[0] ?? "?"}:${o.port?.[0] ?? "?"}/${o.database}`;
  }

  /** From now on this replica writes `rollout`'s events under `epoch`. */
  own(rollout: string, epoch: number): void {
    this.#owned.set(rollout, epoch);
  }

  /** This replica no longer writes `rollout`'s events. */
  disown(rollout: string): void {
    this.#owned.delete(rollout);
  }

  /** The epoch this replica owns `rollout` at, if it does. */
  epochOf(rollout: string): number | undefined {
    return this.#owned.get(rollout);
  }

  /** Rollouts this replica owns, with their epochs. */
  owned(): ReadonlyMap<string, number> {
    return this.#owned;
  }

  record(event: JournalEvent): Promise<void> {
    const epoch = this.#owned.get(event.rollout);
    if (epoch === undefined) {
      return Promise.reject(
        new RolloutFencedError(
          event.rollout,
          `replica ${this.replica} does not own rollout ${event.rollout}`,
        ),
      );
    }
    const written = new Promise<void>((resolve, reject) => {
      this.#queue.push({
        event,
        epoch,
        uid: `${this.replica}:${++this.#counter}`,
        done: { resolve, reject },
      });
      this.#flushing ??= this.#flush();
    });
    this.#last = written.catch(() => {});
    return written;
  }

  /**
   * Resolves once every event recorded so far is written (or failed): batches are written in
   * order, so once the last one recorded is. Events recorded later do not extend the wait (under
   * steady load the queue is never empty).
   */
  async flushed(): Promise<void> {
    await this.#last;
  }

  #last: Promise<void> = Promise.resolve();

  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, BATCH);
        try {
          await this.#retrying(
            () => writeEvents(this.sql, this.replica, batch, this.#sharedKnown, this.#sharedHashes),
            this.#attemptMs,
          );
          for (const q of batch) q.done.resolve();
        } catch (e) {
          for (const q of batch) q.done.reject(e);
        }
      }
    } finally {
      this.#flushing = null;
    }
  }

  /** `write`, sent again while the connection is what failed (see `retried_write.ts`). */
  #retrying<T>(write: () => Promise<T>, attemptMs = Infinity): Promise<T> {
    return retried(write, this.#retryMs, attemptMs);
  }

  async finish(event: JournalEvent, samples: readonly Sample[]): Promise<number[]> {
    await this.flushed();
    const epoch = this.#owned.get(event.rollout);
    if (epoch === undefined) {
      throw new RolloutFencedError(event.rollout, `replica ${this.replica} does not own it`);
    }
    const uid = `${this.replica}:${++this.#counter}`;
    return await this.#retrying(() =>
      this.sql.begin(async (tx) => {
        const [done] = await tx`SELECT 1 FROM events WHERE uid = ${uid}`;
        if (done) {
          const rows = await tx<{ cursor: string }[]>`
            SELECT cursor FROM samples WHERE uid = ${uid} ORDER BY cursor`;
          return rows.map((r) => Number(r.cursor));
        }
        const [owned] = await tx`
          UPDATE rollouts SET status = 'finished'
          WHERE id = ${event.rollout} AND owner = ${this.replica} AND epoch = ${epoch}
          RETURNING id`;
        if (!owned) {
          throw new RolloutFencedError(
            event.rollout,
            `rollout ${event.rollout} is no longer owned by replica ${this.replica}`,
          );
        }
        const data = JSON.stringify(event.data);
        await tx`
          INSERT INTO events (rollout, kind, at, data, epoch, replica, uid, sum)
          VALUES (${event.rollout}, ${event.kind}, ${Date.now()}, ${data}, ${epoch},
            ${this.replica}, ${uid}, ${rowSum(data, null)})`;
        await withdrawPending(tx, event.rollout, `rollout ${event.rollout} was finished`);
        const cursors = await appendSamples(tx, samples, uid);
        await tx`SELECT pg_notify(${SAMPLES_CHANNEL}, '')`;
        return cursors;
      })
    );
  }

  async forget(rollout: string): Promise<void> {
    await this.flushed();
    await this.#retrying(() =>
      this.sql.begin(async (tx) => {
        await withdrawPending(tx, rollout, `rollout ${rollout} was deleted`);
        await tx`DELETE FROM events WHERE rollout = ${rollout}`;
        await forgetTokenRows(tx, rollout);
        await tx`DELETE FROM rollouts WHERE id = ${rollout} AND owner = ${this.replica}`;
      })
    );
    this.#owned.delete(rollout);
  }

  async expire(rollout: string): Promise<void> {
    await this.flushed();
    await this.#retrying(() =>
      this.sql.begin(async (tx) => {
        await withdrawPending(tx, rollout, `rollout ${rollout} expired`);
        await tx`
          UPDATE rollouts SET status = 'expired', owner = NULL, lease_until = NULL
          WHERE id = ${rollout} AND owner = ${this.replica}`;
      })
    );
    this.#owned.delete(rollout);
  }

  /** The rollouts this replica owns (a replica restores only what it claimed). */
  async rollouts(): Promise<JournaledRollout[]> {
    const ids = [...this.#owned.keys()];
    if (ids.length === 0) return [];
    return await this.describe(ids);
  }

  /** Status and last activity of the named rollouts, oldest first. */
  async describe(ids: readonly string[]): Promise<JournaledRollout[]> {
    const rows = await this.sql<{ id: string; status: string; last: string | null }[]>`
      SELECT r.id, r.status,
        (SELECT max(at) FROM events e WHERE e.rollout = r.id) AS last
      FROM rollouts r WHERE r.id = ANY(${ids as string[]}) ORDER BY r.created_seq`;
    return rows.map((r) => ({
      id: r.id,
      status: (r.status === "reserved" ? "active" : r.status) as JournaledRollout["status"],
      lastActivity: Number(r.last ?? 0),
    }));
  }

  /**
   * A rollout's events in order, without the request events of the trainer side
   * (`request_events.ts`: a completion reaches a restored turn through its pending request).
   */
  async *events(rollout: string): AsyncIterable<JournalEvent> {
    const rows = await this.sql<
      {
        seq: string;
        kind: string;
        data: string;
        arrays: Uint8Array | null;
        shared: string | null;
        sum: string | null;
      }[]
    >`
      SELECT seq, kind, data, arrays, shared, sum FROM events
      WHERE rollout = ${rollout} AND kind <> ALL(${REQUEST_EVENT_KINDS as unknown as string[]})
      ORDER BY seq`;
    const hashes = new Set<string>();
    for (const r of rows) {
      if (r.shared) {
        for (const h of Object.values(JSON.parse(r.shared))) hashes.add(h as string);
      }
    }
    const values = new Map<string, unknown>();
    if (hashes.size > 0) {
      const found = await this.sql<{ hash: string; value: string }[]>`
        SELECT hash, value FROM shared WHERE hash = ANY(${[...hashes]})`;
      for (const f of found) values.set(f.hash, JSON.parse(f.value));
    }
    for (const row of rows) {
      try {
        checkRow(row.data, row.arrays, row.sum === null ? null : Number(row.sum));
      } catch (e) {
        throw new Error(
          `journal: event ${row.seq} of rollout ${rollout} is damaged (${(e as Error).message})`,
        );
      }
      // Kept as it was given: the kind says what `data` holds.
      const event = { rollout, kind: row.kind, data: JSON.parse(row.data) } as JournalEvent;
      if (row.arrays) event.arrays = unpackArrays(row.arrays);
      if (row.shared) {
        event.shared = {};
        for (
          const [name, hash] of Object.entries(JSON.parse(row.shared) as Record<string, string>)
        ) {
          if (!values.has(hash)) throw new Error(`journal: shared value ${hash} is missing`);
          event.shared[name] = values.get(hash);
        }
      }
      yield event;
    }
  }

  async append(samples: readonly Sample[]): Promise<number[]> {
    const uid = `${this.replica}:${++this.#counter}`;
    return await this.#retrying(() =>
      this.sql.begin(async (tx) => {
        const done = await tx<{ cursor: string }[]>`
          SELECT cursor FROM samples WHERE uid = ${uid} ORDER BY cursor`;
        if (done.length > 0) return done.map((r) => Number(r.cursor));
        const cursors = await appendSamples(tx, samples, uid);
        await tx`SELECT pg_notify(${SAMPLES_CHANNEL}, '')`;
        return cursors;
      })
    );
  }

  /** A sample row that fails its checksum is skipped, logged and counted once (`damagedSamples`). */
  after(cursor: number, limit: number): Promise<LoggedSample[]> {
    return samplesAfter(this.sql, cursor, limit, this.#damaged, this.path);
  }

  /** Sample rows found damaged and skipped so far (`/metrics`). */
  get damagedSamples(): number {
    return this.#damaged.size;
  }

  readonly #damaged = new Set<number>();

  oldest(): Promise<number> {
    return oldestCursor(this.sql);
  }

  newest(): Promise<number> {
    return newestCursor(this.sql);
  }

  /**
   * Keeps a turn's rows (fenced by the rollout's epoch), and in memory at once, so its samples
   * read them while the write is on its way (a failed write stops the replica).
   */
  async putRows(
    rollout: string,
    turn: string,
    field: TokenRowField,
    rows: TokenRows,
  ): Promise<void> {
    this.#rowCache.put(rowKey(turn, field), rows.bytes);
    const epoch = this.#owned.get(rollout);
    const written = epoch !== undefined &&
      await this.#retrying(() =>
        putTokenRows(this.sql, { rollout, replica: this.replica, epoch }, turn, field, rows)
      );
    if (!written) {
      throw new RolloutFencedError(
        rollout,
        `rollout ${rollout} is no longer owned by replica ${this.replica}: another replica took it over`,
      );
    }
  }

  /** Keeps an image unless this replica knows the table has it (retried like events). */
  async putImage(hash: string, bytes: Uint8Array): Promise<void> {
    if (this.#imagesKnown.has(hash)) return;
    await this.#retrying(() => putImageRow(this.sql, hash, bytes));
    this.#imagesKnown.add(hash);
  }

  async readImage(hash: string): Promise<Uint8Array | null> {
    return await readImageRow(this.sql, hash);
  }

  /** A turn's rows if this replica holds them in memory (see {@link loadRows}). */
  readRows(turn: string, field: TokenRowField): Uint8Array | null {
    return this.#rowCache.get(rowKey(turn, field));
  }

  /**
   * Holds the rows of `turns` in memory, read from the database when another replica wrote them
   * (or they were dropped from memory), until the returned release is called: samples written
   * out meanwhile read them synchronously.
   */
  async loadRows(turns: readonly string[], field: TokenRowField): Promise<() => void> {
    const held: string[] = [];
    const release = () => {
      for (const key of held.splice(0)) this.#rowCache.unpin(key);
    };
    const missing = [...new Set(turns)].filter((t) => {
      const key = rowKey(t, field);
      if (!this.#rowCache.pin(key)) return true;
      held.push(key);
      return false;
    });
    if (missing.length === 0) return release;
    try {
      for (const [turn, bytes] of await readTokenRows(this.sql, missing, field)) {
        this.#rowCache.put(rowKey(turn, field), bytes, true);
        held.push(rowKey(turn, field));
      }
    } catch (e) {
      release();
      throw e;
    }
    return release;
  }

  close(): void {
    this.sql.end({ timeout: 2 }).catch(() => {});
  }
}
