/**
 * Load driver: the gateway's memory under the user's case. A real gateway process (`main.ts
 * serve`, as `npm start` runs it, journal on in a fresh data directory) serves `--rollouts` agents
 * (default 1,000) all at once over HTTP, each in its own rollout with its own history (one seed
 * per rollout: nothing but the system prompt and task is shared), playing `--turns` tool-call loops
 * (default 10) sized so the last prompt is about `--tokens` ids (default 32,768). Each agent POSTs
 * its whole history to the Chat endpoint (streamed, as the agents do; `--no-stream` for JSON) and
 * appends the answer and a new tool output. `--trainers` trainer loops (default 4) answer every
 * request through the gate over `/api` (`next` with `?ids=base64` as the Python client does, `ack`,
 * `complete`), with the ids of one scripted tool call per turn (the policy is the TEST DOUBLE: real
 * Qwen3 token ids, no model).
 *
 * Reports the gateway's peak RSS (sampled from `/proc` every 50 ms), its RSS at the end, and with
 * `--inspect` the V8 heap through the run (`--trace-heap` prints it every 500 ms) and after a full
 * collection, and with `--snapshot` what holds it (a heap snapshot; take it on a smaller run: its
 * JSON is several times the heap). `--allocations` (implies `--inspect`) samples
 * every allocation of the run and prints the bytes allocated per function and caller.
 *
 *     deno run -A bench/rollout_memory.ts [--rollouts 1000] [--turns 10] [--tokens 32768] \
 *       [--trainers 4] [--concurrency N] [--ids base64|json] [--no-stream] [--inspect] \
 *       [--serve-flags "--no-journal"] [--trainer-form delta|full] [--no-start-flags] [--idle] \
 *       [--allocations] [--routing] [--finish]
 *
 * `--no-start-flags` starts the gateway without `npm start`'s V8 flags (`deno run -A main.ts serve`).
 * `--routing`: the trainer loops send MoE routing with every completion (48 layers × top-8, uint8:
 * 384 bytes a position, kept in the journal, not in memory; issue 24). `--finish`: each rollout is
 * finished when its agent is done (samples built and logged; without it they stay active).
 *
 * `--concurrency N` plays N agents at a time instead of all at once (the easier case: fewer
 * histories in flight). `--idle` (with `--inspect`) creates `--rollouts` rollouts, plays `--turns`
 * turns in each and reports the V8 heap and RSS per rollout they hold while idle, after a full GC
 * and `malloc_trim` (10,000 × 1 turn, 1,000 at a time: what an idle rollout costs).
 * The in-process variant (`bench/rollout_memory_in_process.ts`: a `TurnRunner` and the instant
 * backend, no HTTP, no gate, no journal) is the easier case and stays for comparison.
 *
 * @module
 */
import { PolicyModel } from "../model/mod.ts";
import { type AgentStep, agentSteps, sampledText, SYSTEM_PROMPT, TASK } from "./agent_history.ts";
import { chatBody, chatCall, createRollout, type WireMessage } from "./chat_agent.ts";
import { freePort, startGatewayProcess } from "./gateway_process.ts";
import { Inspector } from "./inspector.ts";
import { startTrainerLoops } from "./scripted_trainer.ts";

function flag(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
function text(name: string, fallback: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : fallback;
}
const ROLLOUTS = flag("rollouts", 1000);
const TURNS = flag("turns", 10);
const TOKENS = flag("tokens", 32768);
const TRAINERS = flag("trainers", 4);
const CONCURRENCY = flag("concurrency", ROLLOUTS);
const IDS = text("ids", "base64") as "base64" | "json";
/** The prompt form the trainers ask for (delta, as the Python client, unless `--trainer-form full`). */
const FORM = text("trainer-form", "delta") as "full" | "delta";
const STREAM = !Deno.args.includes("--no-stream");
const ALLOCATIONS = Deno.args.includes("--allocations");
/**
 * With `--live-at N`: the allocations made from the `--live-from M`th turn on (default: the start)
 * that are still alive when the Nth turn is done (what the peak is made of).
 */
const LIVE_AT = flag("live-at", 0);
const LIVE_FROM = flag("live-from", 0);
const INSPECT = ALLOCATIONS || Deno.args.includes("--inspect");
const IDLE = Deno.args.includes("--idle");
const SERVE_FLAGS = text("serve-flags", "").split(" ").filter(Boolean);
/** `--routing`: every completion carries MoE routing (48 layers × top-8, uint8; issue 24). */
const ROUTING = Deno.args.includes("--routing") ? { layers: 48, topK: 8 } : undefined;
/** `--finish`: each agent's rollout is finished (its samples built and logged) when it is done. */
const FINISH = Deno.args.includes("--finish");
/** `deno run` flags for the gateway process (e.g. `--v8-flags=...`). */
const DENO_FLAGS = text("deno-flags", "").split(" ").filter(Boolean);

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
/** Tool output lines per loop so that `TURNS` loops reach about `TOKENS` (~13 ids per line). */
const lines = Math.max(6, Math.round(TOKENS / TURNS / 14));
const lineRange: [number, number] = [lines - 5, lines + 5];

const model = await PolicyModel.load();
const inspectPort = freePort();
const gateway = await startGatewayProcess({
  serveFlags: SERVE_FLAGS,
  startFlags: !Deno.args.includes("--no-start-flags"),
  denoFlags: [...DENO_FLAGS, ...(INSPECT ? [`--inspect=127.0.0.1:${inspectPort}`] : [])],
});
console.log(
  `options: ${
    JSON.stringify({
      ROLLOUTS,
      TURNS,
      TOKENS,
      TRAINERS,
      CONCURRENCY,
      IDS,
      STREAM,
      IDLE,
      SERVE_FLAGS,
      ROUTING,
      FINISH,
    })
  }; load ${loadavg()}`,
);
const baseline = gateway.rss();
let peak = baseline;
const sampler = setInterval(() => peak = Math.max(peak, gateway.rss()), 50);
/** With `--inspect`: the V8 heap every 500 ms, and what it was when RSS peaked. */
const inspector = INSPECT ? await Inspector.connect(inspectPort) : undefined;
let heapAtPeak = { rss: 0, usedSize: 0, totalSize: 0 };
/** With `--idle`: the heap and RSS of the ready gateway after a full GC and trim. */
const before = IDLE && inspector
  ? { heap: (await inspector.collect()).usedSize, trimmed: await inspector.mallocTrim() }
  : undefined;
const readyRss = gateway.rss();
let statsShown = false;
if (ALLOCATIONS && LIVE_FROM === 0) {
  await inspector!.startAllocationSampling(64 * 1024, LIVE_AT > 0 ? "live" : "all");
}
const heapSampler = inspector && setInterval(async () => {
  const usage = await inspector.call("Runtime.getHeapUsage") as typeof heapAtPeak;
  const rss = gateway.rss();
  if (rss > heapAtPeak.rss) heapAtPeak = { ...usage, rss };
  if (Deno.args.includes("--trace-heap")) {
    const { result } = await inspector.call("Runtime.evaluate", {
      expression: "Deno.memoryUsage().external",
      returnByValue: true,
    }) as { result: { value: number } };
    console.log(
      `  heap ${mb(usage.usedSize)} of ${mb(usage.totalSize)}, external ${mb(result.value)}, ` +
        `rss ${mb(rss)}, ${turnsDone} turns`,
    );
  }
  if (Deno.args.includes("--malloc-stats") && turnsDone > 0.9 * ROLLOUTS * TURNS && !statsShown) {
    statsShown = true;
    await inspector.mallocStats();
  }
}, 500);

/** Each rollout's scripted policy: its own steps, the same ones its agent answers. */
const policySteps = new Map<string, Generator<AgentStep>>();
const trainers = startTrainerLoops(gateway.url, TRAINERS, async (pending) => {
  let steps = policySteps.get(pending.rollout_id);
  if (!steps) {
    steps = agentSteps(Number(pending.rollout_id.slice(4)), lineRange);
    policySteps.set(pending.rollout_id, steps);
  }
  const output_ids = await model.tokenizer.encode(sampledText(steps.next().value!));
  return { output_ids, logprobs: output_ids.map((_, i) => -((i % 7) + 1) / 100) };
}, { ids: IDS, routing: ROUTING, form: FORM });

let turnsDone = 0, lastPrompt = 0, errors = 0;
async function playAgent(i: number): Promise<void> {
  const { id, token } = await createRollout(gateway.url, `mem-${i}`);
  const steps = agentSteps(i, lineRange);
  const history: WireMessage[] = [{ ...SYSTEM_PROMPT }, { ...TASK }];
  for (let t = 0; t < TURNS; t++) {
    const step = steps.next().value!;
    try {
      const answer = await chatCall(gateway.url, id, token, chatBody(history, STREAM), STREAM);
      const call = (answer.message.tool_calls as { id: string }[] | undefined)?.[0];
      if (!call) throw new Error(`the answer has no tool call: ${JSON.stringify(answer.message)}`);
      history.push(answer.message, { role: "tool", tool_call_id: call.id, content: step.output });
      turnsDone++;
      if (turnsDone === LIVE_FROM && LIVE_FROM > 0) {
        void inspector!.startAllocationSampling(64 * 1024, "live");
      }
      if (turnsDone === LIVE_AT) void printAllocations(`alive at turn ${LIVE_AT}`);
      if (t === TURNS - 1) lastPrompt = Math.max(lastPrompt, answer.promptTokens);
    } catch (e) {
      if (++errors <= 3) console.error(`agent ${i}: ${(e as Error).message}`);
      return;
    }
  }
  if (FINISH) {
    const res = await fetch(`${gateway.url}/api/rollouts/${id}/finish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reward: 1 }),
    });
    await res.body?.cancel();
    if (!res.ok && ++errors <= 3) console.error(`agent ${i}: finish ${res.status}`);
  }
}

async function printAllocations(what: string): Promise<void> {
  const top = await inspector!.stopAllocationSampling(40, flag("stack-depth", 2));
  console.log(
    `bytes allocated by function (${what}; RSS ${mb(gateway.rss())}):\n` +
      top.map((a) => `  ${mb(a.bytes)}  ${a.where}`).join("\n"),
  );
}

const started = performance.now();
const progress = setInterval(() => {
  console.log(
    `  ${((performance.now() - started) / 1000).toFixed(0)} s: ${turnsDone} turns, rss ${
      mb(gateway.rss())
    }, peak ${mb(peak)}, load ${loadavg()}`,
  );
}, 10_000);
let nextAgent = 0;
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ROLLOUTS) }, async () => {
  while (nextAgent < ROLLOUTS) await playAgent(nextAgent++);
}));
clearInterval(progress);
const seconds = (performance.now() - started) / 1000;
const trainerStats = await trainers.stop();
clearInterval(sampler);
const end = gateway.rss();
clearInterval(heapSampler);
if (ALLOCATIONS && LIVE_AT === 0) await printAllocations("sampled; collected ones included");
let heap = "";
if (inspector) {
  heap = `; at the highest RSS sampled with the heap (${mb(heapAtPeak.rss)}): V8 heap used ${
    mb(heapAtPeak.usedSize)
  } of ${mb(heapAtPeak.totalSize)}, outside the V8 heap ${
    mb(heapAtPeak.rss - heapAtPeak.totalSize)
  }`;
  const usage = await inspector.collect();
  heap += `; after a full GC: RSS ${mb(gateway.rss())}, V8 heap used ${mb(usage.usedSize)} of ${
    mb(usage.totalSize)
  }`;
  if (await inspector.mallocTrim()) heap += `; after malloc_trim(0): RSS ${mb(gateway.rss())}`;
  if (before) {
    const kb = (bytes: number) => `${(bytes / ROLLOUTS / 1024).toFixed(1)} KB`;
    heap += `; per idle rollout: ${kb(usage.usedSize - before.heap)} of V8 heap, ${
      kb(gateway.rss() - readyRss)
    } of RSS (both after a full GC and malloc_trim, against the ready gateway's)`;
  }
  if (Deno.args.includes("--snapshot")) {
    const summary = await inspector.snapshotSummary();
    heap += `\nheap snapshot: ${mb(summary.totalBytes)} in all; largest holders (self size):\n` +
      summary.holders.map((h) => `  ${h.what}: ${mb(h.bytes)} (${h.count})`).join("\n");
  }
  inspector.close();
}
console.log(
  `${ROLLOUTS} rollouts × ${TURNS} turns (${turnsDone} turns, ${errors} agent errors; trainers ` +
    `${trainerStats.completed} completed, ${trainerStats.errors} errors), last prompt ≤ ` +
    `${lastPrompt} ids, ${seconds.toFixed(0)} s: gateway RSS ${mb(baseline)} ready, peak ${
      mb(peak)
    }, at the end ${mb(end)}${heap}; load ${loadavg()}`,
);
await gateway.stop();
