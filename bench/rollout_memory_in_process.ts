/**
 * Load driver, the easier case of `bench/rollout_memory.ts` (no HTTP, no gate, no journal, no
 * trainer round trips): memory of many long rollouts held at once. `--rollouts` agents (default 1,000)
 * each play `--turns` tool-call loops (default 10) through one real `TurnRunner` (the generation
 * backend is the instant TEST DOUBLE), with tool outputs sized so the last prompt is about
 * `--tokens` ids (default 32,768). Every request's messages are a fresh `JSON.parse` of the whole
 * history, as the gateway gets them from an HTTP body. All rollouts stay in memory to the end,
 * as on a gateway whose trainer collects samples when rollouts finish.
 *
 * Reports the peak RSS sampled during the run, then RSS and the V8 heap after a full GC, then
 * RSS once glibc returned its freed memory (`malloc_trim`, Linux).
 *
 *     deno run -A --v8-flags=--expose-gc bench/rollout_memory_in_process.ts [--rollouts 1000] \
 *       [--turns 10] [--tokens 32768] [--concurrency 32] [--seeds 64]
 *
 * `--seeds N`: distinct histories (rollouts beyond N reuse a seed's history, as fresh strings).
 *
 * @module
 */
import type { Message } from "../canonical/mod.ts";
import { PolicyModel, trimNativeMemory } from "../model/mod.ts";
import { type Rollout, RolloutStore, TurnRunner } from "../trajectory/mod.ts";
import { agentSteps, sampledText, SYSTEM_PROMPT, TASK } from "./agent_history.ts";
import { InstantBackend } from "./instant_backend.ts";
import { chatRequest } from "./turn_fixture.ts";

function flag(name: string, fallback: number): number {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Number(Deno.args[i + 1]) : fallback;
}
const ROLLOUTS = flag("rollouts", 1000);
const TURNS = flag("turns", 10);
const TOKENS = flag("tokens", 32768);
const CONCURRENCY = flag("concurrency", 32);
/** Distinct histories: rollouts beyond this reuse a seed (fresh strings all the same). */
const SEEDS = flag("seeds", 64);

const model = await PolicyModel.load();
const backend = new InstantBackend();
const runner = new TurnRunner(model, backend);
const store = new RolloutStore();
const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

gc?.();
const baseline = Deno.memoryUsage().rss;
let peak = 0;
const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 50);

/** Tool output lines per loop so that `TURNS` loops reach about `TOKENS` (~13 ids per line). */
const lines = Math.max(6, Math.round(TOKENS / TURNS / 14));

interface Agent {
  rollout: Rollout;
  history: Message[];
  steps: Generator<ReturnType<typeof agentSteps> extends Generator<infer S> ? S : never>;
}

async function playTurn(agent: Agent): Promise<number> {
  const step = agent.steps.next().value!;
  const output = await model.tokenizer.encode(sampledText(step));
  const request = chatRequest(JSON.parse(JSON.stringify(agent.history)));
  // The instant backend answers with what was set last; concurrent agents may swap answers,
  // which is fine here: every answer is one tool call the agent then answers.
  backend.answerWith(output);
  const turn = await runner.start(agent.rollout, request, "call_");
  const answer = await turn.result;
  const call = answer.message.tool_calls![0];
  agent.history.push(answer.message, { role: "tool", tool_call_id: call.id, content: step.output });
  return turn.promptLength;
}

const agents: Agent[] = Array.from({ length: ROLLOUTS }, (_, i) => ({
  rollout: store.create({ id: `mem-${i}` }),
  history: [SYSTEM_PROMPT, TASK],
  steps: agentSteps(i % SEEDS, [lines - 5, lines + 5]),
}));

const started = performance.now();
let lastPrompt = 0;
for (let turn = 0; turn < TURNS; turn++) {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < agents.length) {
      const agent = agents[next++];
      const length = await playTurn(agent);
      if (turn === TURNS - 1) lastPrompt = Math.max(lastPrompt, length);
    }
  }));
  console.log(
    `turn ${turn + 1}/${TURNS}: rss ${mb(Deno.memoryUsage().rss)}, ` +
      `${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}
clearInterval(sampler);
// Only the driver's own histories go; the rollouts stay.
for (const a of agents) a.history = [];
gc?.();
const after = Deno.memoryUsage();
// What glibc still keeps of freed native memory (the tokenizer's allocations): the gateway trims
// every 8 MB of text tokenized (model/native_memory.ts); one more malloc_trim(0) shows what is left.
const trimStart = performance.now();
const trimmed = await trimNativeMemory()
  ? `; after malloc_trim(0) (${(performance.now() - trimStart).toFixed(1)} ms): RSS ${
    mb(Deno.memoryUsage().rss)
  }`
  : "; malloc_trim unavailable (no glibc or no FFI permission)";
const turns = agents.reduce((n, a) => n + a.rollout.turns.length, 0);
console.log(
  `${ROLLOUTS} rollouts × ${TURNS} turns (${turns} turns), last prompt ≤ ${lastPrompt} ids: ` +
    `RSS ${mb(baseline)} with the model loaded, peak ${mb(peak)}; after GC: RSS ${
      mb(after.rss)
    }, heap used ${mb(after.heapUsed)} of ${mb(after.heapTotal)}` +
    `${gc ? "" : " (no --expose-gc: not collected)"}, external ${mb(after.external)}${trimmed}; ` +
    `${((performance.now() - started) / 1000).toFixed(0)} s`,
);
