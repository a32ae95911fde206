/**
 * The journal on SQLite (Deno's `node:sqlite`), in WAL mode: one file in the data directory,
 * written synchronously on the caller's turn (so events land in call order), each event its own
 * transaction. With `synchronous = NORMAL` a committed event survives the process being killed;
 * `sync: "full"` also survives the machine losing power, at an fsync per event.
 *
 * Tables: `rollouts` (status, for restore), `events` (per rollout, in order; number arrays in one
 * binary column, see `array_codec.ts`), `shared` (values events repeat, by content hash),
 * `samples` (the sample log: the cursor is the row id). Images are files beside it, by content
 * hash (`images/`, `image_directory.ts`): bytes too large for rows that every turn would rewrite.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type {
  Journal,
  JournaledRollout,
  JournalEvent,
  LoggedSample,
  Sample,
} from "../trajectory/mod.ts";
import { packArrays, unpackArrays } from "./array_codec.ts";
import { joinArrays, splitArrays } from "./sample_row.ts";
import { AckMark, type JournalExtent } from "./ack_mark.ts";
import { JournalDamagedError, JournalLockedError, writeFailure } from "./journal_errors.ts";
import type { TokenRowField, TokenRows } from "../generation/mod.ts";
import { TokenRowsTable } from "./token_rows_table.ts";
import { SQLITE_SCHEMA } from "./sqlite_schema.ts";
import { sampleRowsJson, withSampleRows } from "./sample_rows_codec.ts";
import { checkRow, rowSum } from "./row_checksum.ts";
import { ImageDirectory } from "./image_directory.ts";
import { SharedValueHashes } from "./shared_values.ts";

export interface SqliteJournalOptions {
  /** `normal` (default): survives the process dying; `full`: also power loss (slower). */
  sync?: "normal" | "full";
}

interface Row {
  cursor: number;
  rollout: string;
  data: string;
  arrays: Uint8Array | null;
  sum: number | null;
}

interface EventRow {
  rollout: string;
  kind: string;
  data: string;
  arrays: Uint8Array | null;
  shared: string | null;
}

export class SqliteJournal implements Journal {
  readonly path: string;
  /** The images turns show: `images/` in the data directory. */
  readonly images: ImageDirectory;
  readonly #db: DatabaseSync;
  readonly #insertEvent: StatementSync;
  readonly #insertShared: StatementSync;
  readonly #insertSample: StatementSync;
  readonly #rows: TokenRowsTable;
  /** Hashes known to be in `shared`, so a repeated value costs a lookup, not a write. */
  readonly #sharedKnown = new Set<string>();
  readonly #sharedHashes = new SharedValueHashes();
  readonly #mark: AckMark;
  /** What is committed: the mark follows it after every commit. */
  readonly #extent: JournalExtent;
  /** The first write that failed: from then on nothing more is written (no holes on replay). */
  #broken: Error | null = null;
  /** Cursors of damaged sample rows already reported. */
  readonly #damaged = new Set<number>();

  /**
   * Opens (or creates) `journal.sqlite` in `dir`. Refuses a directory another gateway holds
   * ({@link JournalLockedError}), and a journal that fails SQLite's `quick_check` or holds less
   * than it acknowledged ({@link JournalDamagedError}, saying what the operator can do).
   */
  constructor(dir: string, options: SqliteJournalOptions = {}) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, "journal.sqlite");
    this.images = new ImageDirectory(join(dir, "images"));
    this.#mark = new AckMark(`${this.path}-acked`);
    const acked = this.#mark.read();
    this.#db = new DatabaseSync(this.path);
    const db = this.#db;
    try {
      // One gateway per data directory: the first write takes a lock held until the process
      // ends (set before WAL, so the WAL index lives in the process, not in shared memory).
      db.exec("PRAGMA locking_mode = EXCLUSIVE");
      db.exec("PRAGMA journal_mode = WAL");
      db.exec(`PRAGMA synchronous = ${options.sync === "full" ? "FULL" : "NORMAL"}`);
      db.exec("BEGIN IMMEDIATE");
      db.exec(SQLITE_SCHEMA);
      // Journals from before the per-row checksum: their samples have none (read as they are).
      const columns = db.prepare("PRAGMA table_info(samples)").all() as { name: string }[];
      if (!columns.some((c) => c.name === "sum")) {
        db.exec("ALTER TABLE samples ADD COLUMN sum INTEGER");
      }
      db.exec("COMMIT");
    } catch (e) {
      db.close();
      if (/locked|busy/i.test((e as Error).message)) {
        throw new JournalLockedError(
          `the journal ${this.path} is in use by another gateway (one gateway per --data-dir)`,
        );
      }
      if (/malformed|not a database|corrupt/i.test((e as Error).message)) {
        throw new JournalDamagedError(this.path, (e as Error).message);
      }
      throw e;
    }
    const check = db.prepare("PRAGMA quick_check(5)").all() as { quick_check: string }[];
    if (check.length !== 1 || check[0].quick_check !== "ok") {
      db.close();
      throw new JournalDamagedError(
        this.path,
        `quick_check: ${check.map((r) => r.quick_check).join("; ")}`,
      );
    }
    this.#extent = this.#held();
    if (acked && (this.#extent.events < acked.events || this.#extent.samples < acked.samples)) {
      db.close();
      throw new JournalDamagedError(
        this.path,
        `it holds events up to ${this.#extent.events} and samples up to ${this.#extent.samples}, but events up to ${acked.events} and samples up to ${acked.samples} were acknowledged (${this.#mark.path}): its write-ahead log ${this.path}-wal was deleted or cut, or the file was truncated or replaced`,
        this.#mark.path,
      );
    }
    this.#mark.write(this.#extent);
    this.#insertEvent = db.prepare(
      "INSERT INTO events (rollout, kind, at, data, arrays, shared) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.#insertShared = db.prepare("INSERT OR IGNORE INTO shared (hash, value) VALUES (?, ?)");
    this.#insertSample = db.prepare(
      "INSERT INTO samples (rollout, data, arrays, sum) VALUES (?, ?, ?, ?)",
    );
    this.#rows = new TokenRowsTable(db);
  }

  putRows(rollout: string, turn: string, field: TokenRowField, rows: TokenRows): Promise<void> {
    return this.#committed(() => this.#rows.put(rollout, turn, field, rows));
  }

  putImage(hash: string, bytes: Uint8Array): Promise<void> {
    return this.images.putImage(hash, bytes);
  }

  readImage(hash: string): Promise<Uint8Array | null> {
    return this.images.readImage(hash);
  }

  readRows(turn: string, field: TokenRowField): Uint8Array | null {
    return this.#rows.read(turn, field);
  }

  record(event: JournalEvent): Promise<void> {
    return this.#committed(() => this.#write(event));
  }

  finish(event: JournalEvent, samples: readonly Sample[]): Promise<number[]> {
    return this.#committed(() => {
      this.#write(event);
      this.#db.prepare("UPDATE rollouts SET status = 'finished' WHERE id = ?").run(event.rollout);
      return this.#insertSamples(samples);
    });
  }

  forget(rollout: string): Promise<void> {
    return this.#committed(() => {
      this.#db.prepare("DELETE FROM events WHERE rollout = ?").run(rollout);
      this.#db.prepare("DELETE FROM rollouts WHERE id = ?").run(rollout);
      this.#rows.forget(rollout);
    });
  }

  expire(rollout: string): Promise<void> {
    return this.#committed(() => {
      this.#db.prepare("UPDATE rollouts SET status = 'expired' WHERE id = ?").run(rollout);
    });
  }

  rollouts(): Promise<JournaledRollout[]> {
    const rows = this.#db.prepare(`
      SELECT r.id AS id, r.status AS status,
        (SELECT MAX(at) FROM events e WHERE e.rollout = r.id) AS last
      FROM rollouts r ORDER BY r.created_seq
    `).all() as unknown as { id: string; status: JournaledRollout["status"]; last: number }[];
    return Promise.resolve(
      rows.map((r) => ({ id: r.id, status: r.status, lastActivity: r.last ?? 0 })),
    );
  }

  async *events(rollout: string): AsyncIterable<JournalEvent> {
    const rows = this.#db.prepare(
      "SELECT rollout, kind, data, arrays, shared FROM events WHERE rollout = ? ORDER BY seq",
    ).all(rollout) as unknown as EventRow[];
    const sharedValue = this.#db.prepare("SELECT value FROM shared WHERE hash = ?");
    for (const row of rows) {
      // Kept as it was given: the kind says what `data` holds.
      const event = {
        rollout: row.rollout,
        kind: row.kind,
        data: JSON.parse(row.data),
      } as JournalEvent;
      if (row.arrays) event.arrays = unpackArrays(row.arrays);
      if (row.shared) {
        event.shared = {};
        for (
          const [name, hash] of Object.entries(JSON.parse(row.shared) as Record<string, string>)
        ) {
          const found = sharedValue.get(hash) as { value: string } | undefined;
          if (!found) throw new Error(`journal: shared value ${hash} is missing`);
          event.shared[name] = JSON.parse(found.value);
        }
      }
      yield event;
    }
  }

  /** Samples on their own (the sample log's `append`); a finishing rollout uses `finish`. */
  append(samples: readonly Sample[]): Promise<number[]> {
    return this.#committed(() => this.#insertSamples(samples));
  }

  /**
   * A sample row that cannot be read back (damaged on disk) is skipped with a loud error, counted
   * once ({@link damagedSamples}): the stream goes on with the next sample, never stuck on it.
   */
  after(cursor: number, limit: number): Promise<LoggedSample[]> {
    const page = this.#db.prepare(
      "SELECT cursor, rollout, data, arrays, sum FROM samples WHERE cursor > ? ORDER BY cursor LIMIT ?",
    );
    const out: LoggedSample[] = [];
    for (let from = cursor;;) {
      const rows = page.all(from, limit) as unknown as Row[];
      for (const r of rows) {
        try {
          checkRow(r.data, r.arrays, r.sum);
          out.push({
            cursor: r.cursor,
            sample: withSampleRows(
              joinArrays(JSON.parse(r.data), r.arrays),
              this,
            ) as unknown as Sample,
          });
        } catch (e) {
          if (!this.#damaged.has(r.cursor)) {
            this.#damaged.add(r.cursor);
            console.error(
              `rollgate: journal ${this.path}: sample ${r.cursor} (rollout ${r.rollout}) is damaged and skipped (${
                (e as Error).message
              }); ${this.#damaged.size} damaged sample(s) so far`,
            );
          }
        }
      }
      // A page of nothing but damaged rows is passed over, so the cursor moves on.
      if (out.length > 0 || rows.length < limit) return Promise.resolve(out);
      from = rows.at(-1)!.cursor;
    }
  }

  /** Sample rows found damaged and skipped so far. */
  get damagedSamples(): number {
    return this.#damaged.size;
  }

  oldest(): Promise<number> {
    const first = this.#db.prepare("SELECT MIN(cursor) AS c FROM samples").get() as {
      c: number | null;
    };
    if (first.c !== null) return Promise.resolve(first.c);
    const seq = this.#db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'samples'")
      .get() as { seq: number } | undefined;
    return Promise.resolve((seq?.seq ?? 0) + 1);
  }

  newest(): Promise<number> {
    return Promise.resolve(this.#extent.samples);
  }

  close(): void {
    this.#mark.close();
    if (this.#db.isOpen) this.#db.close();
  }

  /** The highest event seq and sample cursor the database holds. */
  #held(): JournalExtent {
    const rows = this.#db.prepare("SELECT name, seq FROM sqlite_sequence").all() as {
      name: string;
      seq: number;
    }[];
    const seq = (name: string) => Number(rows.find((r) => r.name === name)?.seq ?? 0);
    return { events: seq("events"), samples: seq("samples") };
  }

  #insertSamples(samples: readonly Sample[]): number[] {
    return samples.map((s) => {
      const { data, arrays } = splitArrays(sampleRowsJson(s));
      const json = JSON.stringify(data);
      const row = this.#insertSample.run(String(s.rollout_id), json, arrays, rowSum(json, arrays));
      this.#extent.samples = Number(row.lastInsertRowid);
      return this.#extent.samples;
    });
  }

  #write(event: JournalEvent): void {
    let shared: string | null = null;
    if (event.shared) {
      const hashes: Record<string, string> = {};
      for (const [name, value] of Object.entries(event.shared)) {
        const { hash, json } = this.#sharedHashes.of(value);
        if (!this.#sharedKnown.has(hash)) {
          this.#insertShared.run(hash, json ?? JSON.stringify(value));
          this.#sharedKnown.add(hash);
        }
        hashes[name] = hash;
      }
      shared = JSON.stringify(hashes);
    }
    const row = this.#insertEvent.run(
      event.rollout,
      event.kind,
      Date.now(),
      JSON.stringify(event.data),
      event.arrays ? packArrays(event.arrays) : null,
      shared,
    );
    this.#extent.events = Number(row.lastInsertRowid);
    if (event.kind === "rollout_created") {
      // A new rollout under the id of an expired one starts afresh.
      this.#db.prepare("DELETE FROM events WHERE rollout = ? AND seq < ?").run(
        event.rollout,
        row.lastInsertRowid,
      );
      this.#db.prepare(
        "INSERT OR REPLACE INTO rollouts (id, status, created_seq) VALUES (?, 'active', ?)",
      ).run(event.rollout, row.lastInsertRowid);
    }
  }

  /**
   * One write, all or nothing. The first that fails (disk full, read-only, I/O error) breaks the
   * journal for good: every later write is refused unwritten, so the file stays a prefix of what
   * happened (replayable) and everything acknowledged before the failure is in it.
   */
  /** `fn` in a transaction, as a promise (a failure rejects it rather than throwing). */
  #committed<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(this.#transaction(fn));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  #transaction<T>(fn: () => T): T {
    if (this.#broken) throw this.#broken;
    const before = { ...this.#extent };
    try {
      this.#db.exec("BEGIN");
      const out = fn();
      this.#db.exec("COMMIT");
      this.#mark.write(this.#extent);
      return out;
    } catch (e) {
      // SQLite may have rolled back already (SQLITE_FULL at commit): only roll back what is open.
      if (this.#db.isTransaction) {
        try {
          this.#db.exec("ROLLBACK");
        } catch { /* the failure below says what went wrong */ }
      }
      Object.assign(this.#extent, before);
      this.#broken = writeFailure(this.path, e);
      throw this.#broken;
    }
  }
}
