/**
 * Two trainers racing one completion on two replicas: exactly one is accepted (200), the other
 * gets 409 (already resolved), the agent gets the winner's tokens, and the rollout's log holds
 * exactly one completion event per request. Each replica's `/metrics` counts the shared queue's
 * open requests. Real PostgreSQL, two real gateway processes.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { call, startReplicas } from "./replicas.ts";

const ignore = skipGroup("replicated gateway (PostgreSQL)", postgresMissing());
const REQUESTS = 12;

/** `rollgate_pending_requests` as a replica's `/metrics` reports it. */
async function pending(replica: { url: string }): Promise<number> {
  const res = await call(`${replica.url}/metrics`);
  assert.equal(res.status, 200);
  return Number(/^rollgate_pending_requests (\S+)$/m.exec(String(res.json))![1]);
}

Deno.test({
  name: "cluster: two trainers complete one request on two replicas: exactly one 200, one 409",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const [a, b] = await startReplicas(2, pg.url);
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      for (let i = 0; i < REQUESTS; i++) {
        const home = i % 2 === 0 ? a : b;
        const created = await call(`${home.url}/api/rollouts`, { body: { id: `race${i}` } });
        assert.equal(created.status, 201, JSON.stringify(created.json));
        // The agent asks the other replica: forwarded to the owner.
        const agent = call(`${(i % 2 === 0 ? b : a).url}/rollout/race${i}/v1/chat/completions`, {
          headers: { authorization: `Bearer ${created.json.token}` },
          body: { model: "m", messages: [{ role: "user", content: `race ${i}` }] },
        });
        const next = await call(`${b.url}/api/requests/next?wait=10&rollout=race${i}`);
        assert.equal(next.status, 200, JSON.stringify(next.json));
        const rid = next.json.request_id;
        // Taken, not yet resolved: open in the shared queue, whichever replica is scraped.
        if (i === 0) assert.deepEqual([await pending(a), await pending(b)], [1, 1]);
        // Two outputs the policy could have sampled: "Hello" and "Hi".
        const [fromA, fromB] = await Promise.all([
          call(`${a.url}/api/requests/${rid}/complete`, {
            body: { output_ids: [9707, 151645], finish_reason: "stop" },
          }),
          call(`${b.url}/api/requests/${rid}/complete`, {
            body: { output_ids: [13048, 151645], finish_reason: "stop" },
          }),
        ]);
        assert.deepEqual([fromA.status, fromB.status].toSorted(), [200, 409]);
        const loser = fromA.status === 409 ? fromA : fromB;
        assert.equal(loser.json.error.type, "conflict");
        assert.match(loser.json.error.message, /already resolved/);
        const answered = await agent;
        assert.equal(answered.status, 200, JSON.stringify(answered.json));
        assert.equal(
          answered.json.choices[0].message.content,
          fromA.status === 200 ? "Hello" : "Hi",
          "the agent gets the accepted completion",
        );
        const [{ n }] = await sql`
          SELECT count(*)::int AS n FROM events WHERE ref = ${rid} AND kind = 'request_completed'`;
        assert.equal(n, 1);
        const seen = await call(`${a.url}/api/rollouts/race${i}`);
        assert.deepEqual(seen.json.turns, { total: 1, done: 1, pending: 0, failed: 0 });
      }
      assert.deepEqual([await pending(a), await pending(b)], [0, 0]);
    } finally {
      await sql.end();
      await a.stop();
      await b.stop();
      await pg.stop();
    }
  },
});
