/**
 * A replica's pool reconnects within its bound of the database's return however many attempts
 * failed while it was away (the `postgres` client's own backoff grows past 10 s after a few
 * seconds of failures: a replica's writes then missed their retry time although the database was
 * back, and it stopped; tests/cluster/database_restart_test.ts failed so under load).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import type { JournalEvent } from "../../trajectory/mod.ts";
import { migrate, PgJournal, poolOptions } from "./mod.ts";
import { MAX_RECONNECT_DELAY_S, reconnectDelay } from "./pool_options.ts";
import { postgresMissing, startPostgres } from "../../tests/support/postgres_server.ts";
import { skipGroup } from "../../tests/support/skips.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("pool options: the reconnect wait never exceeds its bound, whatever failed before", () => {
  for (let failures = 0; failures <= 64; failures++) {
    const s = reconnectDelay(failures);
    assert.ok(s > 0 && s <= MAX_RECONNECT_DELAY_S, `${failures} failures: ${s} s`);
  }
  assert.ok(reconnectDelay(0) < reconnectDelay(20), "attempts right after a failure come sooner");
});

Deno.test({
  name:
    "pool options: a write in flight while the database is away 3 s, every connection failing meanwhile, lands once it is back",
  ignore: skipGroup("PostgreSQL journal", postgresMissing()),
  async fn() {
    const pg = await startPostgres();
    const sql = postgres(pg.url, poolOptions(4, 5));
    try {
      await migrate(sql);
      // Retried for 6 s, 2 s an attempt: the client must reconnect within that of the return.
      const j = new PgJournal(sql, { replica: "r1", retryMs: 6_000, attemptMs: 2_000 });
      await sql`INSERT INTO rollouts (id, status, owner, epoch, lease_until)
        VALUES ('a', 'reserved', 'r1', 1, now() + interval '1 minute')`;
      j.own("a", 1);
      await pg.stopServer();
      const written = j.record(
        { rollout: "a", kind: "rollout_created", data: {} } as unknown as JournalEvent,
      );
      // The replica's other statements fail on every connection meanwhile, as its calls do.
      const away = performance.now() + 3_000;
      let failed = 0;
      while (performance.now() < away) {
        const tries = Array.from({ length: 4 }, () => sql`SELECT 1`.then(() => 0, () => 1));
        failed += (await Promise.all(tries)).reduce((a: number, b) => a + b, 0);
        await sleep(200);
      }
      assert.ok(failed >= 4, `statements failed while the database was away: ${failed}`);
      await pg.startServer();
      await written;
      const [row] = await sql`SELECT count(*)::int AS n FROM events WHERE rollout = 'a'`;
      assert.equal(row.n, 1);
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
      await pg.stop();
    }
  },
});
