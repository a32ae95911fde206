/**
 * What one journal commit costs on the event loop, and what its tail is made of: the SQLite
 * journal's `record` of a turn-sized event (~1 kB of JSON, 1,500 ids and logprobs), against the
 * same insert and commit on a bare `node:sqlite` connection with automatic checkpoints off (the
 * floor: a commit that never copies the write-ahead log back; its arrays are a ready buffer of the
 * same size, so it also leaves out their packing and the acknowledgement mark). The journal's p995
 * and max are the commits that run SQLite's automatic checkpoint (every ~1,000 pages of log: two
 * `fsync`s and a copy of the pages, on the caller's thread); the floor has no such tail.
 *
 *     deno bench -A bench/journal_commit_bench.ts
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { SqliteJournal } from "../journal/mod.ts";
import type { JournalEvent } from "../trajectory/mod.ts";

const ITERATIONS = 6_000;
const ids = Array.from({ length: 1_500 }, (_, i) => (i * 7919) % 151_000);
const logprobs = ids.map((_, i) => -((i % 13) + 1) / 100);
const data = { turn: "turn_0", answer: { text: "Run the focused test again. ".repeat(30) } };

const journal = new SqliteJournal(await Deno.makeTempDir({ prefix: "rollgate-commit-bench-" }));
let n = 0;
Deno.bench({
  name: "SqliteJournal.record (automatic checkpoints on the caller's thread)",
  n: ITERATIONS,
  async fn() {
    const event = {
      rollout: `r${n++ % 100}`,
      kind: "turn_recorded",
      data,
      arrays: { ids, logprobs },
    };
    await journal.record(event as unknown as JournalEvent);
  },
});

const dir = await Deno.makeTempDir({ prefix: "rollgate-commit-floor-" });
const db = new DatabaseSync(`${dir}/floor.sqlite`);
for (
  const pragma of [
    "locking_mode = EXCLUSIVE",
    "journal_mode = WAL",
    "synchronous = NORMAL",
    "wal_autocheckpoint = 0",
  ]
) db.exec(`PRAGMA ${pragma}`);
db.exec(
  "CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, rollout TEXT, data TEXT, arrays BLOB)",
);
db.exec("CREATE INDEX events_rollout ON events (rollout, seq)");
const insert = db.prepare("INSERT INTO events (rollout, data, arrays) VALUES (?, ?, ?)");
// The size the journal packs them to: int32 ids, float64 logprobs.
const blob = new Uint8Array(ids.length * 4 + logprobs.length * 8);
let m = 0;
Deno.bench({
  name: "floor: insert + commit, no checkpoint",
  n: ITERATIONS,
  fn() {
    db.exec("BEGIN");
    insert.run(`r${m++ % 100}`, JSON.stringify(data), blob);
    db.exec("COMMIT");
  },
});
