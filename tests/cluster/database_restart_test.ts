/**
 * PostgreSQL restarted mid-run under two replicas behind HAProxy: while it is down `/ready` is
 * false on every replica (naming the database), calls in flight fail with protocol-shaped
 * errors that agents and trainers retry, the replicas reconnect once it is back, and the run
 * ends with every committed turn kept: the samples equal, id for id, those of the same run on one
 * gateway with its SQLite journal.
 */
import assert from "node:assert/strict";
import { startGateway } from "../support/gateway_process.ts";
import { haproxyMissing, startHaproxy } from "../support/haproxy.ts";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { skipGroup } from "../support/skips.ts";
import { until } from "../support/until.ts";
import { runLoad, sampleCore } from "./load.ts";
import { call, sleep, startReplicas } from "./replicas.ts";

const ROLLOUTS = 40;
const TURNS = 5;

const ignore = skipGroup(
  "replicated gateway behind HAProxy",
  postgresMissing() ?? haproxyMissing(),
);

Deno.test({
  name:
    "cluster: PostgreSQL restarted mid-run: /ready false while away, replicas reconnect, committed turns kept",
  ignore,
  async fn() {
    const single = await startGateway();
    const reference = await runLoad({ url: single.url, rollouts: ROLLOUTS, turns: TURNS })
      .finally(() => single.stop());

    const pg = await startPostgres();
    const replicas = await startReplicas(2, pg.url);
    const lb = await startHaproxy(replicas.map((r) => `127.0.0.1:${r.port}`));
    let restart: Promise<void> | undefined;
    const notReady: string[] = [];
    try {
      const run = await runLoad({
        url: lb.url,
        rollouts: ROLLOUTS,
        turns: TURNS,
        onAnswer: (n) => {
          if (restart || n < ROLLOUTS * TURNS * 0.4) return;
          restart = (async () => {
            const away = performance.now();
            await pg.stopServer();
            for (const r of replicas) {
              await until(
                async () => {
                  const ready = await call(`${r.url}/ready`);
                  if (ready.status !== 503) return false;
                  notReady.push(JSON.stringify(ready.json));
                  return true;
                },
                "a replica reports not ready while the database is away",
                60_000,
              ).catch((e) => {
                throw new Error(`${e.message}\n${r.output().slice(-3000)}`);
              });
            }
            await sleep(1_000);
            await pg.startServer();
            for (const r of replicas) {
              await until(
                async () => (await call(`${r.url}/ready`)).status === 200,
                "the replica is ready again once the database is back",
                60_000,
              ).catch((e) => {
                throw new Error(`${e.message}\n${r.output().slice(-3000)}`);
              });
            }
            console.log(
              `database away for ${
                ((performance.now() - away) / 1000).toFixed(1)
              } s (replicas ready again)`,
            );
          })();
        },
      }).catch((e) => {
        // What the replicas said, for a run that did not finish.
        const said = replicas.map((r, i) => `replica ${i}:\n${r.output().slice(-4000)}`);
        throw new Error(`${e.message}\n${said.join("\n")}`);
      });
      await restart;
      console.log(
        `${run.failedCalls} agent calls failed and were retried; ${run.answered} answered`,
      );
      assert.equal(notReady.length, 2);
      for (const body of notReady) assert.match(body, /database/);
      assert.ok(run.failedCalls > 0, "calls in flight while the database was away failed");
      assert.equal(run.samples.size, ROLLOUTS);
      for (const [id, samples] of reference.samples) {
        assert.deepEqual(run.samples.get(id)?.map(sampleCore), samples.map(sampleCore), id);
      }
      for (const r of replicas) {
        const stops = r.output().split("\n").filter((l) => /stops:|journal failed/.test(l));
        assert.deepEqual(stops, [], "no replica gave up on the database");
      }
    } finally {
      await restart?.catch(() => {});
      await lb.stop();
      for (const r of replicas) await r.stop();
      await pg.stop();
    }
  },
});
