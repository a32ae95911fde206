/**
 * Reserving a rollout id against a real PostgreSQL (Debian's, started by the test): a replica that
 * died between reserving an id and creating the rollout must not block that id for good, and a
 * live replica's create in progress, or a rollout that exists, must never be taken by a reserve.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { migrate } from "./schema.ts";
import { OwnershipRows } from "./ownership_rows.ts";
import { postgresMissing, startPostgres } from "../../tests/support/postgres_server.ts";
import { skipGroup } from "../../tests/support/skips.ts";

const ignore = skipGroup("replicated gateway (PostgreSQL)", postgresMissing());
const LEASE_MS = 10_000;

Deno.test({
  name:
    "ownership: a reservation left by a dead replica is taken at the next epoch; a live one, or a rollout, is not",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const sql = postgres(pg.url, { max: 2, onnotice: () => {} });
    try {
      await migrate(sql);
      const a = new OwnershipRows(sql, "replica-a", "http://127.0.0.1:1", LEASE_MS);
      const beat = (replica: string, age: string) =>
        sql`INSERT INTO replicas (id, url, heartbeat_at)
          VALUES (${replica}, 'http://127.0.0.1:2', now() - ${age}::interval)
          ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at`;
      const reserved = (id: string, owner: string, lease: string) =>
        sql`INSERT INTO rollouts (id, status, owner, owner_url, epoch, lease_until)
          VALUES (${id}, 'reserved', ${owner}, 'http://127.0.0.1:2', 1, now() + ${lease}::interval)`;

      // Died mid-create: its lease lapsed and it stopped beating.
      await beat("dead", "1 hour");
      await reserved("left-behind", "dead", "-1 minute");
      assert.equal(await a.reserve("left-behind"), 2);
      const [row] = await sql`SELECT owner, status FROM rollouts WHERE id = 'left-behind'`;
      assert.deepEqual({ ...row }, { owner: "replica-a", status: "reserved" });

      // Creating right now on a live replica: its lease holds.
      await beat("busy", "0 seconds");
      await reserved("in-progress", "busy", "1 minute");
      assert.equal(await a.reserve("in-progress"), undefined);
      // Cut off from the database a moment (its lease lapsed) but still beating: not dead.
      await reserved("cut-off", "busy", "-1 second");
      assert.equal(await a.reserve("cut-off"), undefined);

      // A rollout that exists (active, finished) is never reserved again, whatever its lease.
      await sql`INSERT INTO rollouts (id, status, owner, epoch, lease_until)
        VALUES ('live', 'active', 'dead', 1, now() - interval '1 minute')`;
      assert.equal(await a.reserve("live"), undefined);
      assert.equal(await a.reserve("fresh"), 1);
    } finally {
      await sql.end({ timeout: 2 });
      await pg.stop();
    }
  },
});
