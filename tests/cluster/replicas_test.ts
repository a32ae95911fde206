/**
 * Three replicas on one PostgreSQL behind HAProxy (plain round-robin, the repository's own
 * configuration), real processes over real sockets: 300 rollouts × 10 turns, agents retrying 5%
 * of their requests after a cut connection, trainer workers spread over all replicas by the
 * balancer, and one replica killed with SIGKILL mid-run. Its rollouts finish on the others;
 * nothing is lost or recorded twice, every sample reaches the sample stream once, and the samples
 * equal, id for id, those of the same run on one gateway with its SQLite journal.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { startGateway } from "../support/gateway_process.ts";
import { haproxyMissing, startHaproxy } from "../support/haproxy.ts";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { runLoad, sampleCore } from "./load.ts";
import { startReplicas } from "./replicas.ts";

const ROLLOUTS = 300;
const TURNS = 10;

const ignore = skipGroup(
  "replicated gateway behind HAProxy",
  postgresMissing() ?? haproxyMissing(),
);

Deno.test({
  name:
    "cluster: 3 replicas behind HAProxy, 300 × 10 turns, 5% agent retries, kill -9 of one: samples equal one SQLite gateway's, id for id",
  ignore,
  async fn() {
    // The reference: one gateway, its SQLite journal.
    const single = await startGateway();
    let reference;
    const started = Date.now();
    try {
      reference = await runLoad({ url: single.url, rollouts: ROLLOUTS, turns: TURNS });
    } finally {
      await single.stop();
    }
    console.log(`one gateway (SQLite): ${Date.now() - started} ms`);

    const pg = await startPostgres();
    const replicas = await startReplicas(3, pg.url);
    const lb = await startHaproxy(replicas.map((r) => `127.0.0.1:${r.port}`));
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    let killed = false;
    try {
      const run = await runLoad({
        url: lb.url,
        rollouts: ROLLOUTS,
        turns: TURNS,
        onAnswer: (n) => {
          if (!killed && n >= ROLLOUTS * TURNS * 0.4) {
            killed = true;
            replicas[1].kill("SIGKILL");
          }
        },
      });
      console.log(
        `3 replicas (PostgreSQL, HAProxy, one killed): ${
          Date.now() - started
        } ms since the start; ${run.failedCalls} agent calls retried after a 5xx or a broken connection`,
      );
      assert.ok(killed);
      assert.ok(run.retried >= ROLLOUTS * TURNS * 0.04, `${run.retried} retried requests`);
      // Every rollout: one sample, equal to the reference's, ids, masks and logprobs.
      assert.equal(run.samples.size, ROLLOUTS);
      for (const [id, samples] of reference.samples) {
        assert.deepEqual(
          run.samples.get(id)?.map(sampleCore),
          samples.map(sampleCore),
          `rollout ${id}'s samples differ from the single gateway's`,
        );
      }
      // Nothing recorded twice, whoever recorded it.
      const recorded = await sql<{ rollout: string; n: number }[]>`
        SELECT rollout, count(*)::int AS n FROM events WHERE kind = 'turn_recorded'
        GROUP BY rollout`;
      assert.equal(recorded.length, ROLLOUTS);
      assert.deepEqual([...recorded].filter((r) => r.n !== TURNS), []);
      const completions = await sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM events WHERE kind = 'request_completed'
        GROUP BY ref HAVING count(*) > 1`;
      assert.equal(completions.length, 0, "no request completed twice");
      const dead = /replica (\w+) of the gateway/.exec(replicas[1].output())![1];
      const moved = await sql<{ n: number }[]>`
        SELECT count(DISTINCT rollout)::int AS n FROM events
        WHERE rollout IN (SELECT rollout FROM events WHERE replica = ${dead})
          AND replica <> ${dead} AND kind = 'turn_recorded'`;
      assert.ok(moved[0].n > 0, "the killed replica's rollouts were finished by the others");
      // The sample stream through the balancer: every sample once, in cursor order.
      const stream = await fetch(`${lb.url}/api/samples/stream?after=0`);
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (text.split("\n").length <= ROLLOUTS) text += (await reader.read()).value ?? "";
      await reader.cancel();
      const lines = text.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      assert.deepEqual(
        lines.map((l) => l.cursor),
        Array.from({ length: ROLLOUTS }, (_, k) => k + 1),
      );
      assert.equal(new Set(lines.map((l) => l.rollout_id)).size, ROLLOUTS);
    } finally {
      await sql.end();
      await lb.stop();
      for (const r of replicas) await r.stop();
      await pg.stop();
    }
  },
});
