/**
 * A real Claude Code mid-task when the replica holding its rollout is killed (issue 31): three
 * replicas behind HAProxy, the CLI pointed at the balancer, the scripted policy (TEST DOUBLE at
 * the model boundary) answering through it. Turn 1 runs a shell command; while the policy holds
 * turn 2's request, the rollout's owner gets `kill -9`. The CLI's retry is held by another
 * replica until the rollout moved there, the policy's completion (accepted without an owner) is
 * what the relaunched turn finds, and the task finishes: the file exists, the CLI reports the
 * final answer, and the trajectory is the usual two turns, token for token, trained once (the
 * checks of `tests/e2e/cli_scenario.ts`).
 */
import postgres from "postgres";
import { claudeCode } from "../../harness/mod.ts";
import { runScenario } from "../e2e/cli_scenario.ts";
import type { GatewayProcess } from "../support/gateway_process.ts";
import { haproxyMissing, startHaproxy } from "../support/haproxy.ts";
import { postgresMissing, startPostgres } from "../support/postgres_server.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";
import { startReplicas } from "./replicas.ts";

const replicaId = (out: string) => /replica (\w+) of the gateway/.exec(out)![1];

Deno.test({
  name:
    "cluster: Claude Code mid-task whose replica is killed (kill -9) finishes its task, recorded token for token",
  ignore: skipGroup(
    "Claude Code on replicas behind HAProxy",
    postgresMissing() ?? haproxyMissing() ?? cliMissing(claudeCode),
  ),
  async fn() {
    const pg = await startPostgres();
    const replicas = await startReplicas(3, pg.url, [], "default");
    const lb = await startHaproxy(replicas.map((r) => `127.0.0.1:${r.port}`));
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    let killed = "";
    try {
      // The balancer as the gateway the scenario talks to; the logs are all replicas'.
      const gateway = {
        ...replicas[0],
        url: lb.url,
        output: () =>
          replicas.map((r, i) => `--- replica ${i} ---\n${r.output()}`).join("\n") +
          `\n--- haproxy ---\n${lb.output()}\nkilled: ${killed}`,
      } as GatewayProcess;
      await runScenario(claudeCode, {
        systemMarker: "Claude Agent SDK",
        gateway,
        beforeAnswer: async (turn) => {
          if (turn !== 1) return;
          const [{ owner }] = await sql<{ owner: string }[]>`
            SELECT owner FROM rollouts WHERE status = 'active'`;
          const victim = replicas.find((r) => replicaId(r.output()) === owner)!;
          killed = owner;
          await victim.kill("SIGKILL");
        },
      });
      if (!killed) throw new Error("the owner was never killed");
      console.log(`killed replica ${killed} while the policy held turn 2`);
    } finally {
      await sql.end();
      await lb.stop();
      for (const r of replicas) await r.stop();
      await pg.stop();
    }
  },
});
