/**
 * The journal: rollouts, turns, pending requests and finished samples on disk, so a gateway
 * restarted after a crash (`kill -9` included) picks up where it was. It implements the
 * `Journal` contract of `trajectory/` on SQLite (`node:sqlite`, WAL mode), one file per data
 * directory and one gateway per file.
 *
 * - `sqlite_journal.ts`: the store.
 * - `array_codec.ts`: token ids, logprobs and masks in binary.
 * - `sample_row.ts`: a sample as a row (its number arrays apart, in binary).
 * - `ack_mark.ts`: how far the journal got, beside it, so a journal that lost acknowledged
 *   changes (a deleted or cut write-ahead log, a truncated file) is refused, not restored short.
 * - `journal_errors.ts`: a locked, damaged or unwritable journal, each saying what to do.
 * - `postgres/`: the same contract on PostgreSQL, shared by the replicas of one gateway, with
 *   ownership fencing, and every other statement on that database (requests, ownership,
 *   replicas): `cluster/` uses them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SqliteJournal } from "./mod.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const journal = new SqliteJournal(dir);
 * await journal.record({
 *   rollout: "r1",
 *   kind: "rollout_created",
 *   data: { id: "r1", token: "rg_x", createdAt: Date.now() },
 * });
 * assert.deepEqual((await journal.rollouts()).map((r) => [r.id, r.status]), [["r1", "active"]]);
 * journal.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */
export { SqliteJournal } from "./sqlite_journal.ts";
export { ImageDirectory } from "./image_directory.ts";
export { JournalDamagedError, JournalLockedError } from "./journal_errors.ts";
export {
  ClaimRows,
  completionOf,
  guardClosedSocketWrites,
  idsOf,
  isConnectionError,
  migrate,
  type Outcome,
  type Owner,
  OwnershipRows,
  PAUSE_CHANNEL,
  PgJournal,
  poolOptions,
  pruneResolvedRequests,
  QUEUE_CHANNEL,
  replicaChannel,
  ReplicaRows,
  RequestRows,
  SAMPLES_CHANNEL,
  tokenHash,
} from "./postgres/mod.ts";
