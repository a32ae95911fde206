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
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import type {
  Journal,
  JournaledRollout,
  JournalEvent,
  LoggedSample,
  Sample,
} from "../../trajectory/mod.ts";
import { packArrays, unpackArrays } from "../array_codec.ts";
import { joinArrays, splitArrays } from "../sample_row.ts";

/** This replica does not own the rollout (any more) at the epoch it writes with. */
export class RolloutFencedError extends Error {
  override name = "RolloutFencedError";
  constructor(readonly rollout: string, message: string) {
    super(message);
  }
}

export interface PgJournalOptions {
  /** This replica's id (written with every event; ownership is checked against it). */
  replica: string;
  /** How long a write is retried while the database is unreachable (default 15 s). */
  retryMs?: number;
}

/** The hash under which a rollout's token is stored (agents naming no rollout are found by it). */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

interface Queued {
  event: JournalEvent;
  epoch: number;
  uid: string;
  done: { resolve(): void; reject(e: unknown): void };
}

/** Most events one statement writes. */
const BATCH = 200;

/** Errors of a broken or refused connection: the write may be sent again. */
export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? "";
  return /^(CONNECTION_|CONNECT_TIMEOUT|ECONN|EPIPE|ETIMEDOUT|57P0[1-3]|08)/.test(code) ||
    /connection|ECONNREFUSED|terminat/i.test((e as Error)?.message ?? "");
}

export class PgJournal implements Journal {
  readonly replica: string;
  readonly #retryMs: number;
  /** Epochs of the rollouts this replica owns. */
  readonly #owned = new Map<string, number>();
  readonly #queue: Queued[] = [];
  #flushing: Promise<void> | null = null;
  #counter = 0;
  readonly #sharedKnown = new Set<string>();

  constructor(readonly sql: Sql, options: PgJournalOptions) {
    this.replica = options.replica;
    this.#retryMs = options.retryMs ?? 15_000;
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
    return new Promise((resolve, reject) => {
      this.#queue.push({
        event,
        epoch,
        uid: `${this.replica}:${++this.#counter}`,
        done: { resolve, reject },
      });
      this.#flushing ??= this.#flush();
    });
  }

  /** Resolves once every event recorded so far is written (or failed). */
  async flushed(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, BATCH);
        try {
          await this.#retrying(() => this.#writeBatch(batch));
          for (const q of batch) q.done.resolve();
        } catch (e) {
          for (const q of batch) q.done.reject(e);
        }
      }
    } finally {
      this.#flushing = null;
    }
  }

  /** Runs `write` again while the connection is what failed, up to the retry time. */
  async #retrying<T>(write: (retry: boolean) => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.#retryMs;
    for (let retry = false;; retry = true) {
      try {
        return await write(retry);
      } catch (e) {
        if (!isConnectionError(e) || Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }

  async #writeBatch(batch: Queued[]): Promise<void> {
    const rows = batch.map((q, ord) => this.#row(q, ord));
    const created = batch.filter((q) => q.event.kind === "rollout_created");
    await this.sql.begin(async (tx) => {
      const shared = batch.flatMap((q) => q.event.shared ? this.#newShared(q.event.shared) : []);
      if (shared.length > 0) {
        await tx`INSERT INTO shared ${tx(shared, "hash", "value")} ON CONFLICT DO NOTHING`;
      }
      // The rollout rows are locked for share: a takeover (an update of the row) waits until
      // this commits, and a row taken over meanwhile no longer matches the epoch.
      const written = await tx.unsafe<{ uid: string }[]>(
        `WITH v AS (
          SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],
            $6::text[], $7::bigint[], $8::text[], $9::int[])
            AS v(rollout, kind, at, data, arrays, shared, epoch, uid, ord)
        ), owned AS (
          SELECT id, epoch FROM rollouts
          WHERE id = ANY($1::text[]) AND owner = $10 FOR SHARE
        )
        INSERT INTO events (rollout, kind, at, data, arrays, shared, epoch, replica, uid)
        SELECT v.rollout, v.kind, v.at, v.data, decode(v.arrays, 'base64'), v.shared, v.epoch,
          $10, v.uid
        FROM v JOIN owned o ON o.id = v.rollout AND o.epoch = v.epoch
        ORDER BY v.ord
        ON CONFLICT (uid) DO NOTHING
        RETURNING uid`,
        [
          rows.map((r) => r.rollout),
          rows.map((r) => r.kind),
          rows.map((r) => r.at),
          rows.map((r) => r.data),
          rows.map((r) => r.arrays),
          rows.map((r) => r.shared),
          rows.map((r) => r.epoch),
          rows.map((r) => r.uid),
          rows.map((r) => r.ord),
          this.replica,
        ] as never[],
      );
      if (written.length < batch.length) {
        const got = new Set(written.map((w) => w.uid));
        const missing = batch.filter((q) => !got.has(q.uid)).map((q) => q.uid);
        // A retried write finds the events its lost attempt committed.
        const landed = await tx<{ uid: string }[]>`
          SELECT uid FROM events WHERE uid = ANY(${missing})`;
        const there = new Set(landed.map((l) => l.uid));
        const fenced = batch.find((q) => !got.has(q.uid) && !there.has(q.uid));
        if (fenced) {
          throw new RolloutFencedError(
            fenced.event.rollout,
            `rollout ${fenced.event.rollout} is no longer owned by replica ${this.replica} at epoch ${fenced.epoch}: another replica took it over`,
          );
        }
      }
      for (const q of created) {
        const token = q.event.data.token;
        await tx`
          UPDATE rollouts SET status = 'active',
            created_seq = (SELECT seq FROM events WHERE uid = ${q.uid}),
            token_hash = ${typeof token === "string" ? tokenHash(token) : null}
          WHERE id = ${q.event.rollout}`;
        // A new rollout under the id of an expired one starts afresh.
        await tx`
          DELETE FROM events WHERE rollout = ${q.event.rollout}
            AND seq < (SELECT seq FROM events WHERE uid = ${q.uid})`;
      }
    });
  }

  #row(q: Queued, ord: number) {
    const e = q.event;
    let shared: string | null = null;
    if (e.shared) {
      shared = JSON.stringify(
        Object.fromEntries(Object.entries(e.shared).map(([k, v]) => [k, hashOf(v).hash])),
      );
    }
    return {
      rollout: e.rollout,
      kind: e.kind,
      at: Date.now(),
      data: JSON.stringify(e.data),
      arrays: e.arrays ? Buffer.from(packArrays(e.arrays)).toString("base64") : null,
      shared,
      epoch: q.epoch,
      uid: q.uid,
      ord,
    };
  }

  #newShared(values: Record<string, unknown>): { hash: string; value: string }[] {
    const out = [];
    for (const v of Object.values(values)) {
      const h = hashOf(v);
      if (this.#sharedKnown.has(h.hash)) continue;
      this.#sharedKnown.add(h.hash);
      out.push({ hash: h.hash, value: h.json });
    }
    return out;
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
        await tx`
          INSERT INTO events (rollout, kind, at, data, epoch, replica, uid)
          VALUES (${event.rollout}, ${event.kind}, ${Date.now()}, ${JSON.stringify(event.data)},
            ${epoch}, ${this.replica}, ${uid})`;
        await withdrawPending(tx, event.rollout, `rollout ${event.rollout} was finished`);
        const cursors = await appendSamples(tx, samples, uid);
        await tx`SELECT pg_notify('rollgate_samples', '')`;
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
   * A rollout's events in order, without the `request_*` events of the trainer side (a
   * completion reaches a restored turn through its pending request).
   */
  async *events(rollout: string): AsyncIterable<JournalEvent> {
    const rows = await this.sql<
      { kind: string; data: string; arrays: Uint8Array | null; shared: string | null }[]
    >`
      SELECT kind, data, arrays, shared FROM events
      WHERE rollout = ${rollout} AND kind NOT LIKE 'request\\_%' ORDER BY seq`;
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
      const event: JournalEvent = { rollout, kind: row.kind, data: JSON.parse(row.data) };
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
        await tx`SELECT pg_notify('rollgate_samples', '')`;
        return cursors;
      })
    );
  }

  async after(cursor: number, limit: number): Promise<LoggedSample[]> {
    const rows = await this.sql<{ cursor: string; data: string; arrays: Uint8Array | null }[]>`
      SELECT cursor, data, arrays FROM samples WHERE cursor > ${cursor}
      ORDER BY cursor LIMIT ${limit}`;
    return rows.map((r) => ({
      cursor: Number(r.cursor),
      sample: joinArrays(JSON.parse(r.data), r.arrays) as unknown as Sample,
    }));
  }

  async oldest(): Promise<number> {
    const [row] = await this.sql<{ first: string | null }[]>`
      SELECT min(cursor) AS first FROM samples`;
    if (row.first !== null) return Number(row.first);
    const [seq] = await this.sql<{ last_value: string; is_called: boolean }[]>`
      SELECT last_value, is_called FROM samples_cursor_seq`;
    return seq.is_called ? Number(seq.last_value) + 1 : 1;
  }

  close(): void {
    this.sql.end({ timeout: 2 }).catch(() => {});
  }
}

/** Any number: the lock that makes sample cursors commit in the order they were taken. */
const SAMPLE_LOCK = 7_460_228;

// deno-lint-ignore no-explicit-any
type Tx = any;

/**
 * Samples in the log. Cursors are taken under a transaction lock so they commit in cursor
 * order: a reader never sees cursor 6 before 5 commits and then misses 5.
 */
async function appendSamples(tx: Tx, samples: readonly Sample[], uid: string): Promise<number[]> {
  if (samples.length === 0) return [];
  await tx`SELECT pg_advisory_xact_lock(${SAMPLE_LOCK})`;
  const cursors: number[] = [];
  for (const s of samples) {
    const { data, arrays } = splitArrays(s as unknown as Record<string, unknown>);
    const [row] = await tx`
      INSERT INTO samples (rollout, data, arrays, uid)
      VALUES (${String(s.rollout_id)}, ${JSON.stringify(data)},
        ${arrays ? Buffer.from(arrays) : null}, ${uid})
      RETURNING cursor`;
    cursors.push(Number(row.cursor));
  }
  return cursors;
}

/** Withdraws a rollout's open requests; their owner is told (`resolved:` on its channel). */
export async function withdrawPending(tx: Tx, rollout: string, reason: string): Promise<void> {
  await tx`
    WITH gone AS (
      UPDATE pending SET state = 'withdrawn', reason = ${reason}, resolved_at = now()
      WHERE rollout = ${rollout} AND state IN ('queued', 'delivered', 'leased')
      RETURNING request_id, rollout
    )
    SELECT pg_notify('rollgate_' || coalesce(r.owner, 'none'), 'resolved:' || g.request_id)
    FROM gone g JOIN rollouts r ON r.id = g.rollout`;
}

function hashOf(value: unknown): { hash: string; json: string } {
  const json = JSON.stringify(value);
  return { hash: createHash("sha256").update(json).digest("base64url"), json };
}
