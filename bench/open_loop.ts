/**
 * Open-loop load on the gateway: agents with think time, a fixed offered rate, real HTTP.
 *
 * For each offered rate a fresh gateway process serves `rate × think` agents, each in its own
 * rollout with its own coding-agent history of about `--tokens` tokens (primed by one unmeasured
 * first turn). By default the gateway is the one users run (`main.ts serve`, as `npm start` starts
 * it, journal on in a fresh data directory) and every turn goes through the interception gate:
 * `--trainers` trainer loops (default 4) take each request over `/api` (`next` with
 * `?ids=base64&ack=1` as the Python client asks, then `complete`) and answer with the ids of one
 * scripted tool call (the policy is the TEST DOUBLE: real ids, no model). `--backend instant` runs
 * the easier case instead: `bench/open_loop_gateway.ts`, `createGateway` in process with the
 * instant backend double, no trainer round trip, no journal.
 *
 * Turns arrive as a Poisson process at the offered rate, whatever the gateway's speed (open
 * loop); each arrival goes to the agent idle longest, which POSTs its whole history plus a new,
 * never-seen tool result to the Chat endpoint (streamed, as the agents ask; `--no-stream` for
 * JSON), and appends the answer. If no agent is idle the arrival waits, and that wait counts.
 *
 * Reported per rate, over the window after a warm-up: latency from the scheduled arrival to the
 * response ("open loop", what a trainer sees) and from the send ("service"), the gateway's CPU per
 * turn (from `/proc/<pid>/stat`; split by thread name from `/proc/<pid>/task`: the event loop's
 * thread carries the process's name), its peak RSS, and the driver's own CPU share (it runs on the
 * same machine, trainer loops included).
 *
 *     deno run -A bench/open_loop.ts --rates 100,250,500 --seconds 10 --tokens 8000
 *
 * `--gateway-flags "--v8-flags=--prof"` profiles the gateway process (V8 tick log in the current
 * directory; `node --prof-process` reads it). `--checkout DIR` runs another checkout's `main.ts`
 * (an earlier release, side by side; before the journal add `--old`: no `--data-dir`, ready on
 * `/health`, no `ack`); its trainers ask for the full prompt form unless `--trainer-form delta`,
 * this checkout's for the delta form unless `--trainer-form full`; a checkout's trainers take each
 * request with `next`, then `ack`). `--no-ack` has the trainers complete without acknowledging (the calls an
 * old release takes). `--serve-flags "--no-journal"` passes flags to `serve`.
 *
 * `--cold N` asks whether long first turns stall other rollouts' warm turns: N more rollouts, each
 * with its own history of about `--cold-tokens` tokens (default 80000; seeds no warm agent uses,
 * so nothing but the system prompt and task is cached), send their first turn all at once 2 s into
 * the measured window (or halfway through a shorter one). The cold turns are reported on their own
 * (latency, prompt tokens, errors) and are not among the measured turns; the warm turns that
 * arrived while a cold turn was in flight get their own open-loop latency. The gateway CPU per
 * turn then includes the CPU the cold turns use within the window (still divided by the warm
 * turns only).
 *
 *     deno run -A bench/open_loop.ts --rates 100 --seconds 10 --tokens 8000 --cold 4
 *
 * @module
 */
import { PolicyModel } from "../model/mod.ts";
import { pytestOutput, rng } from "./agent_history.ts";
import { chatBody, chatCall, chatHistory, createRollout, type WireMessage } from "./chat_agent.ts";
import {
  type GatewayProcess,
  procCpuSeconds,
  procStats,
  startGatewayProcess,
} from "./gateway_process.ts";
import { startTrainerLoops, type TrainerLoops } from "./scripted_trainer.ts";
import { MEASURED_OUTPUT } from "./turn_fixture.ts";

interface Options {
  rates: number[];
  seconds: number;
  warmup: number;
  think: number;
  tokens: number;
  /** Cold first turns fired at once during the measured window. */
  cold: number;
  coldTokens: number;
  /** Extra `deno run` flags for the gateway process (e.g. `--v8-flags=--prof` to profile it). */
  gatewayFlags: string[];
  /** `gate`: `main.ts serve` with trainer loops over `/api`; `instant`: the in-process double. */
  backend: "gate" | "instant";
  trainers: number;
  stream: boolean;
  /** Flags for `serve` (gate mode). */
  serveFlags: string[];
  /** Another checkout's `main.ts` (gate mode). */
  checkout?: string;
  /** The checkout predates the journal, `/ready` and `ack`. */
  old: boolean;
  /** Trainers acknowledge each request (default; `--no-ack` skips it, as `--old` must). */
  ack: boolean;
  /** The id transport the trainers ask for (default base64, as the Python client). */
  ids: "base64" | "json";
  /**
   * The prompt form the trainers ask for: delta (as the Python client; default) or full (the
   * default with `--checkout`, whose release may know only that form).
   */
  form?: "full" | "delta";
}

function parseOptions(args: string[]): Options {
  const o: Options = {
    rates: [100, 250, 500],
    seconds: 10,
    warmup: 2,
    think: 1,
    tokens: 8000,
    cold: 0,
    coldTokens: 80000,
    gatewayFlags: [],
    backend: "gate",
    trainers: 4,
    stream: true,
    serveFlags: [],
    old: false,
    ack: true,
    ids: "base64",
  };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === "--no-stream" || flag === "--old" || flag === "--no-ack") {
      if (flag === "--no-stream") o.stream = false;
      else if (flag === "--no-ack") o.ack = false;
      else [o.old, o.ack] = [true, false];
      i--;
      continue;
    }
    if (flag === "--rates") o.rates = value.split(",").map(Number);
    else if (flag === "--seconds") o.seconds = Number(value);
    else if (flag === "--warmup") o.warmup = Number(value);
    else if (flag === "--think") o.think = Number(value);
    else if (flag === "--tokens") o.tokens = Number(value);
    else if (flag === "--cold") o.cold = Number(value);
    else if (flag === "--cold-tokens") o.coldTokens = Number(value);
    else if (flag === "--gateway-flags") o.gatewayFlags = value.split(" ").filter(Boolean);
    else if (flag === "--serve-flags") o.serveFlags = value.split(" ").filter(Boolean);
    else if (flag === "--backend") o.backend = value as Options["backend"];
    else if (flag === "--trainers") o.trainers = Number(value);
    else if (flag === "--ids") o.ids = value as Options["ids"];
    else if (flag === "--checkout") o.checkout = value;
    else if (flag === "--trainer-form") o.form = value as Options["form"];
    else throw new Error(`unknown flag ${flag}`);
  }
  return o;
}

interface Agent {
  rollout: string;
  token: string;
  history: WireMessage[];
  /** The next request body, built while the agent "thinks". */
  body: string;
}

/** The new tool output of a measured turn: 16 lines, unique in the process (never cached). */
const OUTPUT = pytestOutput(rng(777), 16, "(run #) ");
let runs = 0;
function toolResult(callId: string): WireMessage {
  return { role: "tool", tool_call_id: callId, content: OUTPUT.replace("#", String(++runs)) };
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
}

const loadavg = () => Deno.readTextFileSync("/proc/loadavg").trim();

/** The in-process gateway with the instant backend double (`--backend instant`). */
async function startInstantGateway(flags: string[]): Promise<GatewayProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...flags, new URL("./open_loop_gateway.ts", import.meta.url).pathname],
    stdout: "piped",
    stderr: "inherit",
    stdin: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let line = "";
  const timer = setTimeout(() => child.kill(), 120_000);
  while (!line.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the gateway exited before listening");
    line += value;
  }
  clearTimeout(timer);
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  const { port } = JSON.parse(line.split("\n")[0]) as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    ...procStats(child.pid),
    async stop() {
      child.kill();
      await child.status;
    },
  };
}

/** The gateway of this run and, in gate mode, its trainers. */
async function startGateway(o: Options): Promise<{ gw: GatewayProcess; trainers?: TrainerLoops }> {
  if (o.backend === "instant") return { gw: await startInstantGateway(o.gatewayFlags) };
  const gw = await startGatewayProcess({
    serveFlags: o.serveFlags,
    denoFlags: o.gatewayFlags,
    checkout: o.checkout,
    ...(o.old ? { journal: false, readyPath: "/health" } : {}),
  });
  const output_ids = await (await model()).tokenizer.encode(MEASURED_OUTPUT);
  const logprobs = output_ids.map((_, i) => -((i % 7) + 1) / 100);
  const trainers = startTrainerLoops(gw.url, o.trainers, () => ({ output_ids, logprobs }), {
    // A checkout may predate `next?ack=1`: it gets the two-step form.
    ack: !o.ack ? "none" : o.checkout ? "call" : "next",
    ids: o.ids,
    form: o.form ?? (o.checkout ? "full" : "delta"),
  });
  return { gw, trainers };
}

let loaded: Promise<PolicyModel> | undefined;
/** The policy's tokenizer, for the trainers' scripted output (loaded once). */
const model = () => loaded ??= PolicyModel.load();

/** Whether agents stream (set from the options once). */
let STREAM = true;

/**
 * A new rollout whose agent holds a history of about `chars` characters and a new tool result;
 * `chars` in the answer is the history's actual size.
 */
async function newAgent(
  url: string,
  name: string,
  seed: number,
  chars: number,
): Promise<{ agent: Agent; chars: number }> {
  const { id, token } = await createRollout(url, name);
  const h = chatHistory(seed, chars);
  const agent: Agent = { rollout: id, token, history: h.messages, body: "" };
  agent.history.push(toolResult(h.lastCallId));
  agent.body = chatBody(agent.history, STREAM);
  return { agent, chars: h.chars };
}

/** One agent turn: POST the prepared body, append the answer and a new tool result. */
async function turn(url: string, agent: Agent, timeoutMs = 60_000): Promise<number> {
  const { message, promptTokens } = await chatCall(
    url,
    agent.rollout,
    agent.token,
    agent.body,
    STREAM,
    timeoutMs,
  );
  const call = (message.tool_calls as { id: string }[] | undefined)?.[0];
  if (!call) throw new Error(`the answer has no tool call: ${JSON.stringify(message)}`);
  agent.history.push(message, toolResult(call.id));
  agent.body = chatBody(agent.history, STREAM);
  return promptTokens;
}

async function measure(o: Options, rate: number) {
  const { gw, trainers } = await startGateway(o);
  const url = gw.url;
  let peakRss = 0;
  const rssSampler = setInterval(() => peakRss = Math.max(peakRss, gw.rss()), 50);
  try {
    const agents: Agent[] = [];
    const count = Math.max(1, Math.round(rate * o.think));
    // Each turn adds ~300 tokens; start below the target so the measured window centers on it.
    const turnsToCenter = (o.warmup + o.seconds / 2) / o.think;
    const primeTokens = Math.max(1000, o.tokens - turnsToCenter * 300);
    let charsPerToken = 3.5;
    const first = { chars: 0, tokens: 0 }; // agent 0's actual history size and prompt tokens
    for (let i = 0; i < count; i++) {
      const primed = await newAgent(url, `open-loop-${i}`, 1000 + i, primeTokens * charsPerToken);
      const { agent } = primed;
      const bytes = agent.body.length;
      const tokens = await turn(url, agent); // the first turn: a cold full render, unmeasured
      if (i === 0) {
        charsPerToken *= primeTokens / tokens;
        Object.assign(first, { chars: primed.chars, tokens });
        console.log(`  primed agent 0: ${tokens} prompt tokens (${bytes} body bytes)`);
      }
      agents.push(agent);
    }
    const coldAgents: Agent[] = [];
    if (o.cold > 0) {
      // Sized along the slope from agent 0 to a probe twice its size: the fixed part of a prompt
      // (system prompt, tools, the new tool result) has no history characters, so agent 0's
      // ratio alone would size a long history short. Seeds after the warm agents' own: nothing
      // of a cold history is in the segment cache.
      const seed = 1000 + count;
      const probe = await newAgent(url, "open-loop-probe", seed, 2 * first.chars);
      const probeTokens = await turn(url, probe.agent);
      const slope = (probe.chars - first.chars) / (probeTokens - first.tokens);
      const chars = first.chars + (o.coldTokens - first.tokens) * slope;
      for (let i = 0; i < o.cold; i++) {
        coldAgents.push((await newAgent(url, `open-loop-cold-${i}`, seed + 1 + i, chars)).agent);
      }
    }

    const idle = [...agents];
    const waiting: number[] = []; // scheduled times of arrivals that found no idle agent
    const openLoop: number[] = [], service: number[] = [], prompts: number[] = [];
    const scheduledAt: number[] = []; // each measured warm turn's arrival, in `openLoop` order
    let errors = 0, inFlight = 0, completed = 0;
    const random = rng(rate);
    const t0 = performance.now();
    const measureFrom = t0 + o.warmup * 1000, end = measureFrom + o.seconds * 1000;
    let cpu0 = 0, driverCpu0 = 0, threads0 = new Map<string, number>();
    const coldAt = measureFrom + Math.min(2, o.seconds / 2) * 1000;
    const cold = { latency: [] as number[], prompts: [] as number[], errors: 0, from: 0, until: 0 };
    let coldSettled: Promise<unknown> | undefined;
    const fireCold = () => {
      cold.from = performance.now();
      coldSettled = Promise.all(
        coldAgents.map((agent) =>
          turn(url, agent, 300_000).then((tokens) => {
            cold.latency.push(performance.now() - cold.from);
            cold.prompts.push(tokens);
          }, (e) => {
            if (++cold.errors <= 3) console.error(`  cold error: ${e}`);
          }).finally(() => cold.until = performance.now())
        ),
      );
    };

    const start = (agent: Agent, scheduled: number) => {
      inFlight++;
      const sent = performance.now();
      turn(url, agent).then((tokens) => {
        const done = performance.now();
        if (scheduled >= measureFrom && scheduled < end) {
          openLoop.push(done - scheduled);
          scheduledAt.push(scheduled);
          service.push(done - sent);
          prompts.push(tokens);
          completed++;
        }
      }, (e) => {
        errors++;
        if (errors <= 3) console.error(`  error: ${e}`);
      }).finally(() => {
        inFlight--;
        const next = waiting.shift();
        if (next !== undefined) start(agent, next);
        else idle.push(agent);
      });
    };

    let next = t0;
    let measuring = false;
    for (;;) {
      const now = performance.now();
      if (!measuring && now >= measureFrom) {
        measuring = true;
        [cpu0, driverCpu0] = [gw.cpuSeconds(), procCpuSeconds("self")];
        threads0 = gw.cpuByThread();
      }
      if (coldAgents.length && !coldSettled && now >= coldAt) fireCold();
      if (now >= end) break;
      while (next <= now) {
        const agent = idle.shift();
        if (agent) start(agent, next);
        else waiting.push(next);
        next += -Math.log(1 - random()) * 1000 / rate;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(1, next - performance.now()))));
    }
    const [cpu1, driverCpu1] = [gw.cpuSeconds(), procCpuSeconds("self")];
    const threads1 = gw.cpuByThread();
    const drainBy = performance.now() + 60_000;
    while ((inFlight > 0 || waiting.length > 0) && performance.now() < drainBy) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const unfinished = inFlight + waiting.length;
    await coldSettled; // each cold turn ends by its own timeout
    const duringCold = openLoop.filter((_, i) =>
      cold.from > 0 && scheduledAt[i] >= cold.from && scheduledAt[i] < cold.until
    ).sort((a, b) => a - b);
    for (const xs of [cold.latency, cold.prompts]) xs.sort((a, b) => a - b);
    openLoop.sort((a, b) => a - b);
    service.sort((a, b) => a - b);
    prompts.sort((a, b) => a - b);
    const arrived = openLoop.length;
    return {
      rate,
      agents: count,
      turns: completed,
      achieved: completed / o.seconds,
      errors,
      unfinished,
      prompt: [prompts[0], quantile(prompts, 0.5), prompts[prompts.length - 1]],
      openLoop: [quantile(openLoop, 0.5), quantile(openLoop, 0.99), openLoop[arrived - 1]],
      service: [quantile(service, 0.5), quantile(service, 0.99)],
      gatewayCpuMsPerTurn: ((cpu1 - cpu0) * 1000) / Math.max(1, completed),
      threadCpuMsPerTurn: [...threads1].map(([name, s]) =>
        [name, ((s - (threads0.get(name) ?? 0)) * 1000) / Math.max(1, completed)] as const
      ).filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]),
      gatewayCores: (cpu1 - cpu0) / o.seconds,
      driverCores: (driverCpu1 - driverCpu0) / o.seconds,
      peakRss,
      cold: coldAgents.length === 0 ? undefined : {
        turns: cold.latency.length,
        errors: cold.errors,
        prompt: [quantile(cold.prompts, 0), quantile(cold.prompts, 1)],
        latency: [0, 0.5, 1].map((q) => quantile(cold.latency, q)),
        warmTurns: duringCold.length,
        warmOpenLoop: [0.5, 0.99, 1].map((q) => quantile(duringCold, q)),
      },
    };
  } finally {
    clearInterval(rssSampler);
    const trained = await trainers?.stop();
    if (trained && trained.errors > 0) console.error(`  trainer errors: ${trained.errors}`);
    await gw.stop();
  }
}

const o = parseOptions(Deno.args);
STREAM = o.stream;
console.log(`options: ${JSON.stringify(o)}`);
const ms = (x: number) => x.toFixed(1);
for (const rate of o.rates) {
  const before = loadavg();
  console.log(`offered ${rate} turns/s: load before ${before}`);
  const r = await measure(o, rate);
  console.log(`  load after ${loadavg()}`);
  console.log(
    `  ${r.agents} agents, ${r.turns} turns measured (${r.achieved.toFixed(0)}/s), ` +
      `${r.errors} errors, ${r.unfinished} unfinished; prompt tokens ${r.prompt.join(" / ")} ` +
      `(min / p50 / max)\n` +
      `  open-loop latency p50 ${ms(r.openLoop[0])} ms, p99 ${ms(r.openLoop[1])} ms, ` +
      `max ${ms(r.openLoop[2])} ms; service p50 ${ms(r.service[0])} ms, p99 ${
        ms(r.service[1])
      } ms\n` +
      `  gateway peak RSS ${(r.peakRss / 2 ** 20).toFixed(0)} MB; ` +
      `gateway CPU ${r.gatewayCpuMsPerTurn.toFixed(2)} ms/turn (${r.gatewayCores.toFixed(2)} ` +
      `cores${r.cold ? ", cold turns' CPU included" : ""}); driver ${
        r.driverCores.toFixed(2)
      } cores\n` +
      `  gateway CPU by thread, ms/turn: ${
        r.threadCpuMsPerTurn.map(([name, ms]) => `${name} ${ms.toFixed(2)}`).join(", ")
      }`,
  );
  if (r.cold) {
    const c = r.cold;
    console.log(
      `  cold: ${c.turns} first turns, ${c.errors} errors; prompt tokens ${c.prompt.join(" / ")} ` +
        `(min / max); latency ${c.latency.map(ms).join(" / ")} ms (min / p50 / max)\n` +
        `  warm turns arriving during cold: ${c.warmTurns}; open-loop latency p50 ` +
        `${ms(c.warmOpenLoop[0])} ms, p99 ${ms(c.warmOpenLoop[1])} ms, max ${
          ms(c.warmOpenLoop[2])
        } ms`,
    );
  }
}
