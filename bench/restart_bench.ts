/**
 * Load driver: how long a gateway takes to come back with 1,000 rollouts × 20 turns in its
 * journal. The journal is built in process (a real `TurnRunner` writing to a real journal, an
 * instant test-double backend; coding-agent tool loops with multi-line tool outputs), with each
 * rollout's 20th turn still waiting for its answer, as after a crash. Then it is restored:
 *
 * 1. in process: open the journal, `createGateway`, `restore()`;
 * 2. as a real `main.ts serve --data-dir` process: from spawn to `/ready` answering 200 (model
 *    loaded, journal restored), against the same start with an empty data directory.
 *
 * Run: `deno run -A bench/restart_bench.ts [rollouts] [turns]` (default 1000 × 20).
 *
 * @module
 */
import type { Message } from "../canonical/mod.ts";
import { createGateway } from "../gateway/mod.ts";
import type { Completion, GenerationBackend, GenerationRequest } from "../generation/mod.ts";
import { SqliteJournal } from "../journal/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { RolloutActions } from "../trajectory/mod.ts";
import { startGateway } from "../tests/support/gateway_process.ts";
import { agentSteps, sampledText, SYSTEM_PROMPT, TASK } from "./agent_history.ts";
import { chatRequest } from "./turn_fixture.ts";

const ROLLOUTS = Number(Deno.args[0] ?? 1000);
const TURNS = Number(Deno.args[1] ?? 20);

/** TEST DOUBLE: answers at once with the ids it was given, or never (a request in flight). */
class ScriptedBackend implements GenerationBackend {
  readonly name = "bench double";
  answer: number[] = [];
  hold = false;
  generate(_req: GenerationRequest): Promise<Completion> {
    if (this.hold) return new Promise(() => {});
    return Promise.resolve({ output_ids: this.answer, finish_reason: "stop" });
  }
}

const model = await PolicyModel.load();
const dir = await Deno.makeTempDir({ prefix: "rollgate-restart-" });
try {
  console.log(`load: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
  const built = performance.now();
  {
    const journal = new SqliteJournal(dir);
    const backend = new ScriptedBackend();
    const rollouts = new RolloutActions({ model, backend, journal });
    const replies = new Map<string, number[]>();
    for (let r = 0; r < ROLLOUTS; r++) {
      const rollout = await rollouts.create({ id: `r${r}`, metadata: { task: `task-${r % 50}` } });
      const steps = agentSteps(r, [4, 40]);
      const history: Message[] = [SYSTEM_PROMPT, TASK];
      for (let k = 0; k < TURNS; k++) {
        const step = steps.next().value!;
        const text = sampledText(step);
        backend.answer = replies.get(text) ?? await model.tokenizer.encode(text);
        replies.set(text, backend.answer);
        backend.hold = k === TURNS - 1;
        const turn = await rollouts.startTurn(rollout, chatRequest([...history]), "call_");
        if (backend.hold) break;
        const answer = await turn.result;
        history.push(structuredClone(answer.message));
        const call = answer.message.tool_calls![0];
        history.push({ role: "tool", tool_call_id: call.id, content: step.output });
      }
    }
    await rollouts.durable();
    journal.close();
  }
  const size = [...Deno.readDirSync(dir)].reduce(
    (n, f) => n + Deno.statSync(`${dir}/${f.name}`).size,
    0,
  );
  console.log(
    `journal: ${ROLLOUTS} rollouts × ${TURNS} turns (the last one pending) built in ${
      ((performance.now() - built) / 1000).toFixed(0)
    } s, ${(size / 1e6).toFixed(0)} MB on disk`,
  );

  for (let i = 0; i < 2; i++) {
    const started = performance.now();
    const journal = new SqliteJournal(dir);
    const gw = createGateway({ model, journal });
    const report = await gw.restore();
    const ms = performance.now() - started;
    console.log(
      `in process: restored ${report!.rollouts} rollouts, ${report!.turns} turns, ${
        report!.requeued
      } requests back in the queue in ${ms.toFixed(0)} ms (heap ${
        (Deno.memoryUsage().heapUsed / 1e6).toFixed(0)
      } MB)`,
    );
    gw.rollouts.abandon("bench over");
    journal.close();
  }

  for (
    const [label, args] of [["empty data dir", []], ["this journal", ["--data-dir", dir]]] as const
  ) {
    const started = performance.now();
    const gw = await startGateway([...args]);
    const ms = performance.now() - started;
    const line = gw.output().split("\n").find((l) => l.includes("restored")) ?? "";
    console.log(
      `process start to /ready, ${label}: ${ms.toFixed(0)} ms  (${
        line.replace(/^.*restored/, "restored")
      })`,
    );
    await gw.stop();
  }
  console.log(`load: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
} finally {
  await Deno.remove(dir, { recursive: true });
}
// The restored in-process gateways keep their rollouts' idle-expiry timers: the bench is over.
Deno.exit(0);
