/**
 * A request row whose turn ended while the database was away (its owner's withdrawal was lost
 * with the connection) is withdrawn by its owner the first time a trainer's `next` claims it, on
 * the owner itself or through another replica; before, it was offered again every second, ahead
 * of the queued requests, until its rollout ended. A request a turn still waits for is served as
 * always. Real PostgreSQL, two real gateway processes; the lost withdrawal is the row such an
 * outage leaves, written directly.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { call, startReplicas } from "./replicas.ts";

const ignore = skipGroup("replicated gateway (PostgreSQL)", postgresMissing());

Deno.test({
  name: "cluster: an open request no turn waits for is withdrawn when claimed, not offered forever",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const [a, b] = await startReplicas(2, pg.url);
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const leftBehind = async (rid: string) => {
      await sql`INSERT INTO pending (request_id, rollout, turn_id, state, lease_ms, max_tokens)
        VALUES (${rid}, 'o1', 'o1.t0.gone', 'queued', 60000, 16)`;
    };
    const stateOf = async (rid: string) => {
      const [row] = await sql`SELECT state, reason FROM pending WHERE request_id = ${rid}`;
      return { ...row };
    };
    try {
      const created = await call(`${a.url}/api/rollouts`, { body: { id: "o1" } });
      assert.equal(created.status, 201, JSON.stringify(created.json));

      // Claimed on its owner: nothing else is queued, and the row is withdrawn, not released.
      await leftBehind("lost-1");
      const none = await call(`${a.url}/api/requests/next?wait=1`);
      assert.equal(none.status, 204, JSON.stringify(none.json));
      assert.deepEqual(await stateOf("lost-1"), {
        state: "withdrawn",
        reason: "its turn ended while the database was away",
      });

      // Claimed through another replica, ahead of a request an agent waits for.
      await leftBehind("lost-2");
      const agent = call(`${a.url}/rollout/o1/v1/chat/completions`, {
        headers: { authorization: `Bearer ${created.json.token}` },
        body: { model: "m", messages: [{ role: "user", content: "hello" }] },
      });
      const next = await call(`${b.url}/api/requests/next?wait=10`);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      assert.notEqual(next.json.request_id, "lost-2");
      assert.equal((await stateOf("lost-2")).state, "withdrawn");
      const done = await call(`${b.url}/api/requests/${next.json.request_id}/complete`, {
        body: { output_ids: [9707, 151645], finish_reason: "stop" },
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      const answered = await agent;
      assert.equal(answered.status, 200, JSON.stringify(answered.json));
      assert.equal(answered.json.choices[0].message.content, "Hello");
    } finally {
      await sql.end();
      await a.stop();
      await b.stop();
      await pg.stop();
    }
  },
});
