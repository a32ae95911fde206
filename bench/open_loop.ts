/**
 * Open-loop load on the gateway: agents with think time, a fixed offered rate, real HTTP.
 *
 * For each offered rate a fresh gateway process (`bench/open_loop_gateway.ts`: the real gateway on
 * a loopback port, generation by the instant backend double) serves `rate × think` agents, each
 * in its own rollout with a coding-agent history of about `--tokens` tokens (primed by one
 * unmeasured first turn). Turns arrive as a Poisson process at the offered rate, whatever the
 * gateway's speed (open loop); each arrival goes to the agent idle longest, which POSTs its whole
 * history plus a new, never-seen tool result to the Chat endpoint, and appends the answer.
 * If no agent is idle the arrival waits, and that wait counts.
 *
 * Reported per rate, over the window after a warm-up: latency from the scheduled arrival to the
 * response ("open loop", what a trainer sees) and from the send ("service"), the gateway's CPU per
 * turn (from `/proc/<pid>/stat`) and the driver's own CPU share (it runs on the same machine).
 * The backend answers at once, so the latency is what rollgate adds.
 *
 *     deno run -A bench/open_loop.ts --rates 100,250,500 --seconds 10 --tokens 8000
 *
 * `--gateway-flags "--v8-flags=--prof"` profiles the gateway process (V8 tick log in the current
 * directory; `node --prof-process` reads it).
 *
 * @module
 */
import { agentSteps, pytestOutput, rng, SYSTEM_PROMPT, TASK } from "./agent_history.ts";
import { chatBody } from "./http_fixture.ts";

interface Options {
  rates: number[];
  seconds: number;
  warmup: number;
  think: number;
  tokens: number;
  /** Extra `deno run` flags for the gateway process (e.g. `--v8-flags=--prof` to profile it). */
  gatewayFlags: string[];
}

function parseOptions(args: string[]): Options {
  const o: Options = {
    rates: [100, 250, 500],
    seconds: 10,
    warmup: 2,
    think: 1,
    tokens: 8000,
    gatewayFlags: [],
  };
  for (let i = 0; i < args.length; i += 2) {
    const [flag, value] = [args[i], args[i + 1]];
    if (flag === "--rates") o.rates = value.split(",").map(Number);
    else if (flag === "--seconds") o.seconds = Number(value);
    else if (flag === "--warmup") o.warmup = Number(value);
    else if (flag === "--think") o.think = Number(value);
    else if (flag === "--tokens") o.tokens = Number(value);
    else if (flag === "--gateway-flags") o.gatewayFlags = value.split(" ").filter(Boolean);
    else throw new Error(`unknown flag ${flag}`);
  }
  return o;
}

const JSON_HEADERS = { "content-type": "application/json" };
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** A wire message as the agent sends it. */
type WireMessage = Record<string, unknown>;

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

/** An agent history of about `chars` characters of tool loops (the agent's own loops). */
function history(seed: number, chars: number): { messages: WireMessage[]; lastCallId: string } {
  const messages: WireMessage[] = [{ ...SYSTEM_PROMPT }, { ...TASK }];
  let size = 0, n = 0, lastCallId = "";
  for (const step of agentSteps(seed, [10, 70])) {
    lastCallId = `call_${seed}_${n++}`;
    const args = JSON.stringify(step.args);
    messages.push({
      role: "assistant",
      content: step.reasoning,
      tool_calls: [{
        id: lastCallId,
        type: "function",
        function: { name: step.tool, arguments: args },
      }],
    });
    messages.push({ role: "tool", tool_call_id: lastCallId, content: step.output });
    size += step.reasoning.length + args.length + step.output.length;
    if (size >= chars) return { messages, lastCallId };
  }
  throw new Error("unreachable");
}

/** CPU seconds (user + system) of a process so far. */
async function cpuSeconds(pid: number | "self"): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
}

const loadavg = () => Deno.readTextFileSync("/proc/loadavg").trim();

async function startGateway(flags: string[]) {
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
  return { child, url: `http://127.0.0.1:${port}` };
}

/** One agent turn: POST the prepared body, append the answer and a new tool result. */
async function turn(url: string, agent: Agent): Promise<number> {
  const res = await fetch(`${url}/rollout/${agent.rollout}/v1/chat/completions`, {
    method: "POST",
    headers: { ...JSON_HEADERS, authorization: `Bearer ${agent.token}` },
    body: agent.body,
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`turn: ${res.status} ${text.slice(0, 300)}`);
  const body = JSON.parse(text);
  const message = body.choices[0].message;
  const call = message.tool_calls?.[0];
  if (!call) throw new Error(`the answer has no tool call: ${text.slice(0, 300)}`);
  agent.history.push(message, toolResult(call.id));
  agent.body = chatBody(agent.history, false);
  return body.usage.prompt_tokens;
}

async function measure(o: Options, rate: number) {
  const { child, url } = await startGateway(o.gatewayFlags);
  try {
    const agents: Agent[] = [];
    const count = Math.max(1, Math.round(rate * o.think));
    // Each turn adds ~300 tokens; start below the target so the measured window centers on it.
    const turnsToCenter = (o.warmup + o.seconds / 2) / o.think;
    const primeTokens = Math.max(1000, o.tokens - turnsToCenter * 300);
    let charsPerToken = 3.5;
    for (let i = 0; i < count; i++) {
      const res = await fetch(`${url}/api/rollouts`, {
        method: "POST",
        headers: JSON_HEADERS,
        body: JSON.stringify({ id: `open-loop-${i}` }),
      });
      const { id, token } = await res.json() as { id: string; token: string };
      const h = history(1000 + i, primeTokens * charsPerToken);
      const agent: Agent = { rollout: id, token, history: h.messages, body: "" };
      agent.history.push(toolResult(h.lastCallId));
      agent.body = chatBody(agent.history, false);
      const chars = agent.body.length;
      const tokens = await turn(url, agent); // the first turn: a cold full render, unmeasured
      if (i === 0) charsPerToken *= primeTokens / tokens;
      if (i === 0) console.log(`  primed agent 0: ${tokens} prompt tokens (${chars} body bytes)`);
      agents.push(agent);
    }

    const idle = [...agents];
    const waiting: number[] = []; // scheduled times of arrivals that found no idle agent
    const openLoop: number[] = [], service: number[] = [], prompts: number[] = [];
    let errors = 0, inFlight = 0, completed = 0;
    const random = rng(rate);
    const t0 = performance.now();
    const measureFrom = t0 + o.warmup * 1000, end = measureFrom + o.seconds * 1000;
    let cpu0 = 0, driverCpu0 = 0;

    const start = (agent: Agent, scheduled: number) => {
      inFlight++;
      const sent = performance.now();
      turn(url, agent).then((tokens) => {
        const done = performance.now();
        if (scheduled >= measureFrom && scheduled < end) {
          openLoop.push(done - scheduled);
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
        [cpu0, driverCpu0] = [await cpuSeconds(child.pid), await cpuSeconds("self")];
      }
      if (now >= end) break;
      while (next <= now) {
        const agent = idle.shift();
        if (agent) start(agent, next);
        else waiting.push(next);
        next += -Math.log(1 - random()) * 1000 / rate;
      }
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(1, next - performance.now()))));
    }
    const [cpu1, driverCpu1] = [await cpuSeconds(child.pid), await cpuSeconds("self")];
    const drainBy = performance.now() + 60_000;
    while ((inFlight > 0 || waiting.length > 0) && performance.now() < drainBy) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const unfinished = inFlight + waiting.length;
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
      gatewayCores: (cpu1 - cpu0) / o.seconds,
      driverCores: (driverCpu1 - driverCpu0) / o.seconds,
    };
  } finally {
    child.kill();
    await child.status;
  }
}

const o = parseOptions(Deno.args);
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
      `  gateway CPU ${r.gatewayCpuMsPerTurn.toFixed(2)} ms/turn (${r.gatewayCores.toFixed(2)} ` +
      `cores); driver ${r.driverCores.toFixed(2)} cores`,
  );
}
