/**
 * Resolved requests leave `pending` after their retention, only where nothing can still need them
 * (real PostgreSQL, Debian's, started by the test).
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { migrate } from "./schema.ts";
import { pruneResolvedRequests } from "./resolved_requests.ts";
import { postgresMissing, startPostgres } from "../../tests/support/postgres_server.ts";
import { skipGroup } from "../../tests/support/skips.ts";

const ignore = skipGroup("PostgreSQL journal", postgresMissing());

Deno.test({
  name:
    "resolved requests: a finished or deleted rollout's rows go after the retention; open ones, a live rollout's, recent ones and unstored routing rows stay",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const sql = postgres(pg.url, { max: 2, onnotice: () => {} });
    try {
      await migrate(sql);
      await sql`INSERT INTO rollouts (id, status) VALUES ('done', 'finished'), ('live', 'active')`;
      const row = (id: string, rollout: string, state: string, agoS: number | null, rows = false) =>
        sql`INSERT INTO pending (request_id, rollout, turn_id, state, lease_ms, max_tokens,
            resolved_at, routed_experts)
          VALUES (${id}, ${rollout}, ${`${rollout}.t`}, ${state}, 60000, 16,
            ${agoS === null ? null : sql`now() - make_interval(secs => ${agoS})`},
            ${rows ? new Uint8Array([1, 2]) : null})`;
      await row("old-completed", "done", "completed", 3600);
      await row("old-withdrawn", "done", "withdrawn", 3600);
      await row("old-failed-deleted-rollout", "deleted", "failed", 3600);
      await row("recent", "done", "completed", 5);
      await row("open", "done", "queued", null);
      await row("live-rollout", "live", "completed", 3600);
      await row("unstored-rows", "done", "completed", 3600, true);

      assert.equal(await pruneResolvedRequests(sql, 60_000, 2), 2, "a batch is bounded");
      assert.equal(await pruneResolvedRequests(sql, 60_000), 1);
      assert.equal(await pruneResolvedRequests(sql, 60_000), 0);
      const left = await sql<{ request_id: string }[]>`
        SELECT request_id FROM pending ORDER BY request_id`;
      assert.deepEqual(left.map((r) => r.request_id), [
        "live-rollout",
        "open",
        "recent",
        "unstored-rows",
      ]);
    } finally {
      await sql.end();
      await pg.stop();
    }
  },
});
