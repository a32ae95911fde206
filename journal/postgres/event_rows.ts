/**
 * Writing a batch of events in one statement: the values they repeat (by content hash) and the
 * events, checked row by row that this replica owns each rollout at the epoch the event carries
 * (the rollout rows locked for share, so a takeover waits for the write or the write sees the
 * takeover); a batch that creates a rollout also changes `rollouts`, in the same transaction. A batch
 * sent again after a lost connection writes only the events its first attempt did not.
 *
 * @module
 */
import type { Sql } from "postgres";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import type { JournalEvent } from "../../trajectory/mod.ts";
import { packArrays } from "../array_codec.ts";
import { rowSum } from "../row_checksum.ts";
import type { SharedValueHashes } from "../shared_values.ts";

/** This replica does not own the rollout (any more) at the epoch it writes with. */
export class RolloutFencedError extends Error {
  override name = "RolloutFencedError";
  constructor(readonly rollout: string, message: string) {
    super(message);
  }
}

/** The hash under which a rollout's token is stored (agents naming no rollout are found by it). */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}

/** An event waiting for its batch. */
export interface Queued {
  event: JournalEvent;
  epoch: number;
  uid: string;
  done: { resolve(): void; reject(e: unknown): void };
}

/**
 * The values events repeat that are new (by hash), then the events, each only where this replica
 * owns its rollout at the event's epoch: the rollout rows are locked for share, so a takeover (an
 * update of the row) waits until this commits, and a row taken over meanwhile no longer matches.
 */
const INSERT_EVENTS = `
  WITH s AS (
    INSERT INTO shared (hash, value) SELECT * FROM unnest($12::text[], $13::text[])
    ON CONFLICT DO NOTHING
  ), v AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],
      $6::text[], $7::bigint[], $8::text[], $9::int[], $11::bigint[])
      AS v(rollout, kind, at, data, arrays, shared, epoch, uid, ord, sum)
  ), owned AS (
    SELECT id, epoch FROM rollouts WHERE id = ANY($1::text[]) AND owner = $10 FOR SHARE
  )
  INSERT INTO events (rollout, kind, at, data, arrays, shared, epoch, replica, uid, sum)
  SELECT v.rollout, v.kind, v.at, v.data, decode(v.arrays, 'base64'), v.shared, v.epoch,
    $10, v.uid, v.sum
  FROM v JOIN owned o ON o.id = v.rollout AND o.epoch = v.epoch
  ORDER BY v.ord
  ON CONFLICT (uid) DO NOTHING
  RETURNING uid`;

export async function writeEvents(
  sql: Sql,
  replica: string,
  batch: readonly Queued[],
  sharedKnown: Set<string>,
  hashes: SharedValueHashes,
): Promise<void> {
  // The new shared values first: a value hashed for the first time comes with its JSON.
  const shared = newShared(batch, sharedKnown, hashes);
  const rows = batch.map((q, ord) => row(q, ord, hashes));
  const created = batch.filter((q) => q.event.kind === "rollout_created");
  const params = [
    rows.map((r) => r.rollout),
    rows.map((r) => r.kind),
    rows.map((r) => r.at),
    rows.map((r) => r.data),
    rows.map((r) => r.arrays),
    rows.map((r) => r.shared),
    rows.map((r) => r.epoch),
    rows.map((r) => r.uid),
    rows.map((r) => r.ord),
    replica,
    rows.map((r) => r.sum),
    shared.map((s) => s.hash),
    shared.map((s) => s.value),
  ] as never[];
  const write = async (tx: Sql) => {
    const written = await tx.unsafe<{ uid: string }[]>(INSERT_EVENTS, params);
    if (written.length === batch.length) return;
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
        `rollout ${fenced.event.rollout} is no longer owned by replica ${replica} at epoch ${fenced.epoch}: another replica took it over`,
      );
    }
  };
  // Most batches are one statement, atomic on its own (one round trip, not BEGIN … COMMIT);
  // one that creates a rollout also changes the rollout's row, in the same transaction.
  if (created.length === 0) await write(sql);
  else {
    await sql.begin(async (tx) => {
      await write(tx as unknown as Sql);
      for (const q of created) {
        const token = q.event.kind === "rollout_created" ? q.event.data.token : undefined;
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
  // Known once committed: a write that failed stores them again when it is sent again.
  for (const s of shared) sharedKnown.add(s.hash);
}

function row(q: Queued, ord: number, hashes: SharedValueHashes) {
  const e = q.event;
  let shared: string | null = null;
  if (e.shared) {
    shared = JSON.stringify(
      Object.fromEntries(Object.entries(e.shared).map(([k, v]) => [k, hashes.of(v).hash])),
    );
  }
  const data = JSON.stringify(e.data);
  const arrays = e.arrays ? packArrays(e.arrays) : null;
  return {
    rollout: e.rollout,
    kind: e.kind,
    at: Date.now(),
    data,
    arrays: arrays ? Buffer.from(arrays).toString("base64") : null,
    shared,
    epoch: q.epoch,
    uid: q.uid,
    ord,
    sum: rowSum(data, arrays),
  };
}

/** Values the batch repeats that are not stored yet (by content hash). */
function newShared(
  batch: readonly Queued[],
  known: ReadonlySet<string>,
  hashes: SharedValueHashes,
): { hash: string; value: string }[] {
  const out = new Map<string, string>();
  for (const q of batch) {
    for (const v of Object.values(q.event.shared ?? {})) {
      const { hash, json } = hashes.of(v);
      if (!known.has(hash) && !out.has(hash)) out.set(hash, json ?? JSON.stringify(v));
    }
  }
  return [...out].map(([hash, value]) => ({ hash, value }));
}
