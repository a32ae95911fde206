/**
 * Load driver: what the journal costs per turn, measured two ways on the same load (coding-agent
 * tool loops: a new multi-line tool output per turn, one sampled tool call back):
 *
 * 1. end to end: a real `main.ts serve` with its journal (a fresh data directory) and with
 *    `--no-journal`, alternately, twice each; agents over OpenAI Chat, trainer workers answering
 *    through `/api` (next, ack, complete). Per mode: each turn's latency as the agent sees it, and
 *    the gateway process's CPU time per turn (`/proc/<pid>/stat`).
 * 2. the turn path alone, in process: `TurnRunner` with an instant backend (a test double), with
 *    and without the journal, alternately, three times each after a warm-up; per-turn latency
 *    (start → answer, journal writes included) and CPU per turn. Without HTTP and trainer noise,
 *    the difference is the journal's own cost.
 *
 * Run: `deno run -A bench/journal_bench.ts [rollouts] [turns]` (default 16 × 25).
 *
 * @module
 */
import process from "node:process";
import type { Message } from "../canonical/mod.ts";
import { SqliteJournal } from "../journal/mod.ts";
import { PolicyModel } from "../model/mod.ts";
import { RolloutActions } from "../trajectory/mod.ts";
import { startGateway } from "../tests/support/gateway_process.ts";
import { agentSteps, sampledText, SYSTEM_PROMPT, TASK, TOOLS } from "./agent_history.ts";
import { InstantBackend } from "./instant_backend.ts";
import { chatRequest } from "./turn_fixture.ts";

const ROLLOUTS = Number(Deno.args[0] ?? 16);
const TURNS = Number(Deno.args[1] ?? 25);
const AGENTS = 4;
const WORKERS = 2;
const HZ = 100; // clock ticks per second (Linux USER_HZ)
const JSON_BODY = { "content-type": "application/json" };

const model = await PolicyModel.load();
const reply = sampledText({
  reasoning: "Run the focused test again to see whether the fix holds.",
  tool: "bash",
  args: { command: "python -m pytest -q tests/test_config_loader.py", timeout: 600 },
});
const replyIds = await model.tokenizer.encode(reply);
const wireTools = TOOLS.map((t) => ({
  type: "function",
  function: { name: t.name, description: t.description, parameters: t.parameters },
}));

function cpuTicks(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  return Number(fields[11]) + Number(fields[12]); // utime + stime
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function round(journal: boolean): Promise<{ latencies: number[]; cpuMsPerTurn: number }> {
  const gw = await startGateway(journal ? [] : ["--no-journal"]);
  const stop = new AbortController();
  try {
    const worker = async () => {
      while (!stop.signal.aborted) {
        const next = await fetch(`${gw.url}/api/requests/next?wait=1`);
        if (next.status !== 200) {
          await next.body?.cancel();
          continue;
        }
        const { request_id } = await next.json();
        const post = (verb: string, body: unknown) =>
          fetch(`${gw.url}/api/requests/${request_id}/${verb}`, {
            method: "POST",
            headers: JSON_BODY,
            body: JSON.stringify(body),
          }).then((r) => r.body?.cancel());
        await post("ack", {});
        await post("complete", { output_ids: replyIds, finish_reason: "stop" });
      }
    };
    const latencies: number[] = [];
    const agent = async (n: number) => {
      const created = await fetch(`${gw.url}/api/rollouts`, {
        method: "POST",
        headers: JSON_BODY,
        body: "{}",
      });
      const { id, token } = await created.json();
      const steps = agentSteps(100 + n, [4, 40]);
      const messages: unknown[] = [SYSTEM_PROMPT, TASK];
      for (let k = 0; k < TURNS; k++) {
        const started = performance.now();
        const res = await fetch(`${gw.url}/rollout/${id}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages, tools: wireTools }),
        });
        const answer = await res.json();
        latencies.push(performance.now() - started);
        const message = answer.choices[0].message;
        messages.push(message);
        messages.push({
          role: "tool",
          tool_call_id: message.tool_calls[0].id,
          content: steps.next().value!.output,
        });
      }
      await fetch(`${gw.url}/api/rollouts/${id}/finish`, {
        method: "POST",
        headers: JSON_BODY,
        body: "{}",
      })
        .then((r) => r.body?.cancel());
    };
    const workers = Array.from({ length: WORKERS }, worker);
    const before = cpuTicks(gw.pid);
    let next = 0;
    await Promise.all(Array.from({ length: AGENTS }, async () => {
      while (next < ROLLOUTS) await agent(next++);
    }));
    const cpuMsPerTurn = (cpuTicks(gw.pid) - before) * (1000 / HZ) / (ROLLOUTS * TURNS);
    stop.abort();
    await Promise.all(workers);
    return { latencies, cpuMsPerTurn };
  } finally {
    stop.abort();
    await gw.stop();
  }
}

/** The turn path alone: `TurnRunner` + instant backend, with or without a journal. */
async function inProcess(journal: boolean): Promise<{ latencies: number[]; cpuMsPerTurn: number }> {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-bench-" });
  const sqlite = journal ? new SqliteJournal(dir) : undefined;
  const backend = new InstantBackend();
  const rollouts = new RolloutActions({ model, backend, journal: sqlite });
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  for (let r = 0; r < ROLLOUTS; r++) {
    const rollout = await rollouts.create({ id: `r${r}` });
    const steps = agentSteps(7 + r, [4, 40]);
    const history: Message[] = [SYSTEM_PROMPT, TASK];
    for (let k = 0; k < TURNS; k++) {
      const step = steps.next().value!;
      backend.answerWith(await model.tokenizer.encode(sampledText(step)));
      const started = performance.now();
      const turn = await rollouts.startTurn(rollout, chatRequest([...history]), "call_");
      const answer = await turn.result;
      latencies.push(performance.now() - started);
      history.push(structuredClone(answer.message));
      history.push({
        role: "tool",
        tool_call_id: answer.message.tool_calls![0].id,
        content: step.output,
      });
    }
  }
  const used = process.cpuUsage(cpu);
  sqlite?.close();
  await Deno.remove(dir, { recursive: true });
  return { latencies, cpuMsPerTurn: (used.user + used.system) / 1000 / latencies.length };
}

function row(label: string, journal: boolean, m: { latencies: number[]; cpuMsPerTurn: number }) {
  const sorted = [...m.latencies].sort((a, b) => a - b);
  console.log(
    `| ${label} | ${journal ? "journal" : "--no-journal"} | ${
      percentile(sorted, 0.5).toFixed(2)
    } ms | ${percentile(sorted, 0.99).toFixed(2)} ms | ${m.cpuMsPerTurn.toFixed(2)} ms |`,
  );
}

console.log(`load: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
console.log(`${ROLLOUTS} rollouts × ${TURNS} turns per round`);
console.log("\nthe turn path in process (instant backend):\n");
console.log("| round | mode | p50 | p99 | CPU per turn |");
console.log("| ----- | ---- | --- | --- | ------------ |");
await inProcess(true); // warm-up
for (let r = 1; r <= 3; r++) {
  for (const journal of [true, false]) row(String(r), journal, await inProcess(journal));
}
console.log(
  `\nend to end over HTTP (${AGENTS} agents and ${WORKERS} trainer workers at once):\n`,
);
console.log("| round | mode | p50 | p99 | gateway CPU per turn |");
console.log("| ----- | ---- | --- | --- | -------------------- |");
for (let r = 1; r <= 2; r++) {
  for (const journal of [true, false]) row(String(r), journal, await round(journal));
}
console.log(`load: ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
