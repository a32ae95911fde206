/**
 * The PostgreSQL schema every replica of a gateway shares, created and migrated on start: each
 * migration runs once, in order, under an advisory lock (replicas starting together wait for
 * each other), and `rollgate_schema` remembers the version reached.
 *
 * - `rollouts`: one row per rollout: status, the hash of its token (agents that name no rollout
 *   are found by it), the replica that owns it (`owner`, `owner_url`), the ownership `epoch`
 *   (raised by every claim) and the `lease_until` the owner keeps renewing.
 * - `events`: the journal, per rollout in `seq` order, as `journal/` stores it on SQLite; each
 *   row names the replica and epoch that wrote it and carries a unique `uid` (a write retried
 *   after a lost connection lands once). `ref` names the request of `request_*` events.
 * - `shared`: values events repeat (tool lists), by content hash.
 * - `samples`: the sample log; `cursor` is one sequence for the whole gateway.
 * - `pending`: requests waiting for a trainer: `state` (queued, delivered, leased, completed,
 *   failed, withdrawn), the delivery `epoch`, the lease (`lease_ms`, `deadline`), the ids
 *   appended so far.
 *   Since version 2 also what a trainer's completion is checked against (`prompt_len`,
 *   `rows_from`, `rows_like`), the weight `versions` of appended chunks (`[[offset, version]…]`)
 *   and the completion's `routed_experts` (bytes, dtype, shape) until its owner has stored them.
 * - `token_rows`: turns' per-position rows (`routed_experts`), one row per turn and field, the
 *   bytes as they came (stored uncompressed: expert ids barely compress).
 * - `replicas`: who is up and where (heartbeats); `gateway_state`: pause, for every replica.
 * - `images` (version 3): the images turns show, by content hash (sha256), the bytes as they came
 *   (written once, whichever replica first sees one; read by any).
 *
 * Since version 4 every event and sample row carries `sum`, the CRC-32 of its data and arrays
 * (`../row_checksum.ts`), checked when it is read, and a delivered request names the replica
 * that handed it to a trainer (`delivered_by`). Since version 5 `pending` is vacuumed once 1,000
 * of its rows are dead, not once 20% of it is.
 *
 * @module
 */
import type { Sql } from "postgres";

/** Migrations in order; a released one never changes (add another). */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE rollouts (
    id text PRIMARY KEY,
    status text NOT NULL,
    created_seq bigint NOT NULL DEFAULT 0,
    token_hash text,
    owner text,
    owner_url text,
    epoch bigint NOT NULL DEFAULT 0,
    lease_until timestamptz
  );
  CREATE INDEX rollouts_by_owner ON rollouts (owner);
  CREATE INDEX rollouts_by_token ON rollouts (token_hash);
  CREATE TABLE events (
    seq bigserial PRIMARY KEY,
    rollout text NOT NULL,
    kind text NOT NULL,
    at bigint NOT NULL,
    data text NOT NULL,
    arrays bytea,
    shared text,
    epoch bigint NOT NULL,
    replica text NOT NULL,
    uid text UNIQUE,
    ref text
  );
  CREATE INDEX events_by_rollout ON events (rollout, seq);
  CREATE TABLE shared (hash text PRIMARY KEY, value text NOT NULL);
  CREATE TABLE samples (
    cursor bigserial PRIMARY KEY,
    rollout text NOT NULL,
    data text NOT NULL,
    arrays bytea,
    uid text
  );
  CREATE INDEX samples_by_uid ON samples (uid);
  CREATE TABLE pending (
    request_id text PRIMARY KEY,
    seq bigserial,
    rollout text NOT NULL,
    turn_id text NOT NULL,
    state text NOT NULL,
    epoch integer NOT NULL DEFAULT 0,
    lease_ms integer NOT NULL,
    deadline timestamptz,
    max_tokens integer NOT NULL,
    appended bytea NOT NULL DEFAULT ''::bytea,
    reason text,
    resolved_at timestamptz
  );
  CREATE INDEX pending_open ON pending (seq) WHERE state IN ('queued', 'delivered', 'leased');
  CREATE INDEX pending_by_rollout ON pending (rollout);
  CREATE TABLE replicas (id text PRIMARY KEY, url text NOT NULL, heartbeat_at timestamptz NOT NULL);
  CREATE TABLE gateway_state (id integer PRIMARY KEY, paused boolean NOT NULL);
  INSERT INTO gateway_state VALUES (1, false);
  `,
  // 2: token rows (routed_experts) and weight versions per appended chunk.
  `
  ALTER TABLE pending
    ADD COLUMN prompt_len integer,
    ADD COLUMN rows_from integer NOT NULL DEFAULT 0,
    ADD COLUMN rows_like jsonb,
    ADD COLUMN versions jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN routed_dtype text,
    ADD COLUMN routed_shape jsonb,
    ADD COLUMN routed_experts bytea;
  ALTER TABLE pending ALTER COLUMN routed_experts SET STORAGE EXTERNAL;
  CREATE INDEX pending_carrying_rows ON pending (turn_id) WHERE routed_experts IS NOT NULL;
  CREATE INDEX samples_by_rollout ON samples (rollout);
  CREATE TABLE token_rows (
    turn text NOT NULL,
    field text NOT NULL,
    rollout text NOT NULL,
    dtype text NOT NULL,
    shape jsonb NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (turn, field)
  );
  ALTER TABLE token_rows ALTER COLUMN data SET STORAGE EXTERNAL;
  CREATE INDEX token_rows_by_rollout ON token_rows (rollout);
  `,
  // 3: images by content hash (already compressed: stored as they are).
  `
  CREATE TABLE images (hash text PRIMARY KEY, bytes bytea NOT NULL);
  ALTER TABLE images ALTER COLUMN bytes SET STORAGE EXTERNAL;
  `,
  // 4: a checksum per event and sample row (`row_checksum.ts`; older rows have none), and which
  // replica handed a request to a trainer (offered again at once when that replica is gone).
  `
  ALTER TABLE events ADD COLUMN sum bigint;
  ALTER TABLE samples ADD COLUMN sum bigint;
  ALTER TABLE pending ADD COLUMN delivered_by text;
  `,
  // 5: every claim walks the dead entries of the open-request index (each claim, ack and append
  // leaves one); autovacuum's default waits for 20% of the table to be dead, a share that grows
  // with the run. A fixed count bounds them by what a minute (autovacuum's nap) resolves instead.
  `
  ALTER TABLE pending SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000);
  `,
];

/** Any number: the advisory lock replicas take while migrating. */
const MIGRATION_LOCK = 7_460_227;

/** Brings the database to the latest schema; returns the version it is at. */
export async function migrate(sql: Sql): Promise<number> {
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS rollgate_schema (version integer NOT NULL)`;
    const [row] = await tx<{ version: number }[]>`SELECT version FROM rollgate_schema`;
    let version = row?.version ?? 0;
    if (!row) await tx`INSERT INTO rollgate_schema VALUES (0)`;
    if (version > MIGRATIONS.length) {
      throw new Error(
        `the database's schema is version ${version}; this rollgate knows up to ${MIGRATIONS.length} (upgrade rollgate)`,
      );
    }
    for (; version < MIGRATIONS.length; version++) await tx.unsafe(MIGRATIONS[version]);
    await tx`UPDATE rollgate_schema SET version = ${version}`;
    return version;
  });
}

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;
