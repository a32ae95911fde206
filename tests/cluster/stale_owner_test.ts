/**
 * A stale owner can never write: a replica paused (SIGSTOP) past its owner lease while a turn of
 * its rollout waits; another replica takes the rollout over and a trainer completes the turn
 * there; the paused replica resumes (SIGCONT), learns of the completion, and its attempt to
 * record the turn is refused by the database (the epoch moved); it answers its agent with an
 * error, not the answer, and exits (status 75) for a clean restart. The agent's retry is
 * answered by the new owner with the accepted completion, recorded once.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { until } from "../support/until.ts";
import { call, startReplicas, TEST_LEASE_S } from "./replicas.ts";

const ignore = skipGroup("replicated gateway (PostgreSQL)", postgresMissing());

Deno.test({
  name:
    "cluster: a replica SIGSTOPped past its lease, then SIGCONTed, cannot write; the new owner serves the retry",
  ignore,
  async fn() {
    const pg = await startPostgres();
    const [a, b] = await startReplicas(2, pg.url);
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const replicaId = (out: string) => /replica (\w+) of the gateway/.exec(out)![1];
    const [idA, idB] = [replicaId(a.output()), replicaId(b.output())];
    let stopped = false;
    try {
      const created = await call(`${a.url}/api/rollouts`, { body: { id: "s1" } });
      assert.equal(created.status, 201);
      const headers = { authorization: `Bearer ${created.json.token}` };
      const body = { model: "m", messages: [{ role: "user", content: "hello" }] };
      const first = call(`${a.url}/rollout/s1/v1/chat/completions`, { headers, body });
      await until(
        async () => (await sql`SELECT 1 FROM pending WHERE rollout = 's1'`).length > 0,
        "s1's request is queued",
      );

      Deno.kill(a.pid, "SIGSTOP");
      stopped = true;
      await until(
        async () => {
          const [r] = await sql`SELECT owner FROM rollouts WHERE id = 's1'`;
          return r.owner === idB;
        },
        "replica b took s1 over",
        8 * TEST_LEASE_S * 1000,
      );

      const next = await call(`${b.url}/api/requests/next?wait=10&rollout=s1`);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      const done = await call(`${b.url}/api/requests/${next.json.request_id}/complete`, {
        body: { output_ids: [9707, 151645], finish_reason: "stop" },
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));

      Deno.kill(a.pid, "SIGCONT");
      stopped = false;
      const answered = await first;
      assert.notEqual(
        answered.status,
        200,
        "the stale owner answered as if it had recorded the turn",
      );
      const exit = await a.exited;
      assert.equal(exit.code, 75, a.output());
      assert.match(a.output(), /taken over by another replica|no longer owned/);

      // Nothing the stale owner tried after the takeover landed.
      const [{ late }] = await sql`
        SELECT count(*)::int AS late FROM events WHERE replica = ${idA}
          AND seq > (SELECT min(seq) FROM events WHERE replica = ${idB})`;
      assert.equal(late, 0);

      const retry = await call(`${b.url}/rollout/s1/v1/chat/completions`, { headers, body });
      assert.equal(retry.status, 200, JSON.stringify(retry.json));
      assert.equal(retry.json.choices[0].message.content, "Hello");
      const finished = await call(`${b.url}/api/rollouts/s1/finish`, { body: { reward: 1 } });
      assert.equal(finished.status, 200);
      assert.equal(finished.json.samples.length, 1);
      assert.equal(finished.json.samples[0].turns.length, 1);
      const [{ recorded }] = await sql`
        SELECT count(*)::int AS recorded FROM events WHERE rollout = 's1' AND kind = 'turn_recorded'`;
      assert.equal(recorded, 1);
    } finally {
      if (stopped) Deno.kill(a.pid, "SIGCONT");
      await sql.end();
      await a.stop();
      await b.stop();
      await pg.stop();
    }
  },
});
