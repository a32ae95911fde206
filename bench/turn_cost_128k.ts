/**
 * Load driver: the CPU of one long turn through the real path, against its floor. A real gateway
 * process (`main.ts serve` with `npm start`'s V8 flags, journal on in a fresh data directory)
 * serves one agent that plays `--turns` turns (default 40) one after another from a history of
 * about `--tokens` tokens (default 125,000; each turn adds ~420): its whole history POSTed to the
 * Chat endpoint, streamed (SSE out), every turn through the interception gate, taken by one
 * trainer loop over `/api` (`next` with `?ids=base64&ack=1` as the Python client asks, then
 * `complete`; the policy is the scripted TEST DOUBLE: real Qwen3 ids, no model).
 *
 * Per turn: the gateway's CPU (user + system of every thread, from `/proc`, split by thread name)
 * and, in the same run, the floor: what the driver spends on a UTF-8 decode and `JSON.parse` of
 * the same body (the least any server that reads the request must do). The report is the ratio.
 *
 * `--profile` also samples the gateway's event loop (V8's CPU profiler over its inspector) over
 * the measured turns and splits its time by part: each sample goes to the innermost product file
 * on its stack (agent read, wire → canonical, mount, render, the trainer's calls, SSE, journal,
 * the HTTP server), GC and the runtime's own work apart; `--top N` names the N costliest stacks.
 * `--warmup N` first plays N turns of another agent (its own rollout, an 8k history) on each
 * gateway: V8 still optimizes the turn's code over the first few hundred turns (~2 compiles a turn
 * on its worker threads after 40), which a gateway serving for hours has long done.
 * `--tools claude-code` sends Claude Code's own tools (~48 kB, from its recorded request) with
 * every request instead of the bench's three (~1 kB): a tool set as large as real agents send.
 * `--allocations` samples what the gateway allocates over the measured turns instead (V8's
 * sampling heap profiler: kB a turn by function and its two callers, `--top N` of them).
 *
 *     deno run -A bench/turn_cost_128k.ts [--turns 40] [--warmup 0] [--tokens 125000] [--profile] \
 *       [--top N] [--checkout DIR] [--profile checkout] [--trainer-form full|delta] [--gateway-flags "..."] \
 *       [--serve-flags "--no-journal"] [--checkout-trainer-form full|delta] [--tools claude-code]
 *
 * `--checkout DIR` also runs another checkout's `main.ts` (today's main) side by side in the same
 * run: its own gateway, trainer and agent, the two taking turns one after the other so both see
 * the machine alike; its trainer asks for the full prompt form (`--checkout-trainer-form delta`
 * for a checkout that knows deltas) and acknowledges in the two-step form (`next`, then `ack`).
 *
 * @module
 */
import process from "node:process";
import { PolicyModel } from "../model/mod.ts";
import { pytestOutput, rng } from "./agent_history.ts";
import {
  chatBody,
  chatCall,
  chatHistory,
  claudeCodeTools,
  createRollout,
  type WireMessage,
} from "./chat_agent.ts";
import { freePort, type GatewayProcess, startGatewayProcess } from "./gateway_process.ts";
import { type CallFrame, Inspector } from "./inspector.ts";
import { startTrainerLoops, type TrainerLoops } from "./scripted_trainer.ts";
import { MEASURED_OUTPUT } from "./turn_fixture.ts";

function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}
const TURNS = Number(flag("turns") ?? 40);
/** Turns of a warm-up agent (8k history, its own rollout) before the measured ones. */
const WARMUP = Number(flag("warmup") ?? 0);
const TOKENS = Number(flag("tokens") ?? 125_000);
/** `--profile checkout` profiles the other checkout's gateway instead of this one's. */
const PROFILE = Deno.args.includes("--profile");
/** `--allocations`: bytes the gateway allocates per turn, by function, instead of its CPU profile. */
const ALLOCATIONS = Deno.args.includes("--allocations");
const PROFILE_CHECKOUT = flag("profile") === "checkout";
const CHECKOUT = flag("checkout");
const FORM = (flag("trainer-form") ?? "delta") as "full" | "delta";
/** The other checkout's trainer form: full unless it knows deltas too (an earlier branch). */
const CHECKOUT_FORM = (flag("checkout-trainer-form") ?? "full") as "full" | "delta";
const GATEWAY_FLAGS = (flag("gateway-flags") ?? "").split(" ").filter(Boolean);
const SERVE_FLAGS = (flag("serve-flags") ?? "").split(" ").filter(Boolean);
/** `--tools claude-code`: every request carries Claude Code's ~48 kB of tools, as it sends them. */
const TOOLS = flag("tools") === "claude-code" ? claudeCodeTools() : undefined;

const loadavg = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

/** Where a sample of the event loop goes: the innermost product file on its stack. */
const PARTS: [RegExp, string][] = [
  [/\/journal\/|\/trajectory\/journaling\//, "journal"],
  [/\/gateway\/http\/(read_body|body_stream|raw_body)\.ts/, "agent read (body, JSON.parse)"],
  [/\/gateway\/agent\/[a-z_]+\/(to_canonical|schema)\.ts/, "wire → canonical"],
  [/\/gateway\/agent\/(known_prefix|mounted_prefix)[a-z_]*\.ts/, "agent read (body, JSON.parse)"],
  [/\/trajectory\/tree\//, "mount"],
  [/\/trajectory\/turns\/prompt_plan\.ts|\/model\//, "render + tokenize"],
  [/\/gateway\/trainer\/|\/generation\//, "trainer calls"],
  [/\/gateway\/agent\/(answer_events|text_deltas)\.ts|\/stream\.ts|\/sse_response\.ts/, "SSE out"],
  [/\/gateway\/http\/http_server\.ts|\/gateway\/http\//, "HTTP server"],
  [/\/trajectory\//, "turn bookkeeping (runner, record, chains)"],
  [/\/gateway\//, "gateway routes"],
];

function partOf(stack: CallFrame[]): string {
  const leaf = stack[0].functionName;
  if (leaf === "(garbage collector)") return "GC (on the event loop)";
  if (leaf === "(idle)") return "(idle)";
  if (leaf === "(program)") return "(program: the runtime outside JS)";
  for (const f of stack) {
    if (!f.url.startsWith("file://") || f.url.includes("/node_modules/")) continue;
    for (const [re, part] of PARTS) if (re.test(f.url)) return part;
    return "other product code";
  }
  return "runtime and libraries (no product frame)";
}

/** CPU milliseconds of `f` per call, over `n` calls after one. */
function cpuMs(n: number, f: () => unknown): number {
  f();
  const start = process.cpuUsage();
  for (let k = 0; k < n; k++) f();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / n;
}

const model = await PolicyModel.load();
const output_ids = await model.tokenizer.encode(MEASURED_OUTPUT);
const logprobs = output_ids.map((_, i) => -((i % 7) + 1) / 100);
const inspectPort = freePort();

/** One gateway with its trainer loop and its agent (each side of a comparison has its own). */
interface Side {
  name: string;
  gw: GatewayProcess;
  trainers: TrainerLoops;
  /** One turn: the agent's next body, its prompt tokens. */
  play(): Promise<{ body: string; tokens: number }>;
  cpu: number[];
  threads0?: Map<string, number>;
}

/** An agent on a rollout of its own, from a history of about `tokens`; each call plays a turn. */
async function agent(
  gw: GatewayProcess,
  tokens: number,
  seed: number,
): Promise<() => Promise<{ body: string; tokens: number }>> {
  const { id, token } = await createRollout(gw.url, `turn-cost-${tokens}-${seed}`);
  // ~3.8 characters of history per token in these histories; the first turn says how many.
  const h = chatHistory(seed, tokens * 3.84);
  const history: WireMessage[] = h.messages;
  const OUTPUT = pytestOutput(rng(98 + seed), 16, "(run #) ");
  let runs = 0, lastCall = h.lastCallId;
  const addResult = () =>
    history.push({
      role: "tool",
      tool_call_id: lastCall,
      content: OUTPUT.replace("#", String(++runs)),
    });
  addResult();
  return async () => {
    const body = chatBody(history, true, TOOLS);
    const answer = await chatCall(gw.url, id, token, body, true);
    const call = (answer.message.tool_calls as { id: string }[])[0];
    history.push(answer.message);
    lastCall = call.id;
    addResult();
    return { body, tokens: answer.promptTokens };
  };
}

async function startSide(name: string, checkout?: string): Promise<Side> {
  const gw = await startGatewayProcess({
    checkout,
    // The history passes Qwen3's 131,072 tokens by the last turns.
    serveFlags: ["--context-length", "262144", ...SERVE_FLAGS],
    denoFlags: [
      ...GATEWAY_FLAGS,
      ...((PROFILE || ALLOCATIONS) && !checkout === !PROFILE_CHECKOUT
        ? [`--inspect=127.0.0.1:${inspectPort}`]
        : []),
    ],
  });
  // An earlier release knows only the full prompt form, and `next` then `ack`.
  const trainers = startTrainerLoops(gw.url, 1, () => ({ output_ids, logprobs }), {
    form: checkout ? CHECKOUT_FORM : FORM,
    ack: checkout ? "call" : "next",
  });
  const play = await agent(gw, TOKENS, 1);
  // The warm-up agent: a rollout of its own with a short history of other text (its own seeds),
  // so the measured turns keep their size and no cache has seen their text.
  const warm = WARMUP > 0 ? await agent(gw, 8_000, 2) : undefined;
  for (let w = 0; w < WARMUP; w++) await warm!();
  return { name, gw, trainers, play, cpu: [] };
}

const sides = [await startSide("this checkout")];
if (CHECKOUT) sides.push(await startSide(CHECKOUT, CHECKOUT));
console.log(
  `options: ${
    JSON.stringify({
      TURNS,
      WARMUP,
      TOKENS,
      PROFILE,
      CHECKOUT,
      FORM,
      GATEWAY_FLAGS,
      SERVE_FLAGS,
      tools: TOOLS ? `${JSON.stringify(TOOLS).length} bytes (Claude Code's)` : "the bench's",
    })
  }; load ${loadavg()}`,
);
try {
  for (const side of sides) {
    const first = await side.play(); // a cold full render, unmeasured
    console.log(
      `${side.name}: first turn ${first.tokens} prompt tokens, ${first.body.length} body bytes`,
    );
    await side.play(); // and one warm turn
  }
  const inspector = PROFILE || ALLOCATIONS ? await Inspector.connect(inspectPort) : undefined;
  if (ALLOCATIONS) await inspector?.startAllocationSampling(16 * 1024);
  else await inspector?.startCpuProfile(Number(flag("interval-us") ?? 500));
  const floors: number[] = [], prompts: number[] = [], sizes: number[] = [];
  for (const side of sides) side.threads0 = side.gw.cpuByThread();
  const encoder = new TextEncoder();
  // Turn by turn, the sides alternate: each sees the machine as the other does.
  for (let t = 0; t < TURNS; t++) {
    for (const side of sides) {
      const before = side.gw.cpuSeconds();
      const { body, tokens } = await side.play();
      // Let the trainer's next long poll and the journal settle before reading the CPU.
      await new Promise((r) => setTimeout(r, 20));
      side.cpu.push((side.gw.cpuSeconds() - before) * 1000);
      if (side !== sides[0]) continue;
      prompts.push(tokens);
      const bytes = encoder.encode(body);
      sizes.push(bytes.byteLength);
      floors.push(cpuMs(5, () => JSON.parse(new TextDecoder().decode(bytes))));
    }
  }
  const allocations = ALLOCATIONS
    ? await inspector?.stopAllocationSampling(Number(flag("top") ?? 30), 3)
    : undefined;
  const profile = ALLOCATIONS ? undefined : await inspector?.stopCpuProfileParts(partOf);
  inspector?.close();
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const floor = sum(floors) / TURNS;
  console.log(
    `${TURNS} turns a side, prompts ${prompts[0]} → ${prompts.at(-1)} tokens, bodies ` +
      `${sizes[0]} → ${sizes.at(-1)} bytes; floor (UTF-8 decode + JSON.parse of the same ` +
      `body, in the driver) ${floor.toFixed(2)} ms`,
  );
  for (const side of sides) {
    // /proc counts CPU in 10 ms ticks: only the sum over many turns means something.
    const perTurn = sum(side.cpu) / TURNS;
    const threads1 = side.gw.cpuByThread();
    const byThread = [...threads1].map(([name, s]) =>
      [name, ((s - (side.threads0!.get(name) ?? 0)) * 1000) / TURNS] as const
    ).filter(([, ms]) => ms > 0.005).sort((a, b) => b[1] - a[1]);
    const metrics = await (await fetch(`${side.gw.url}/metrics`)).text();
    const read = metrics.split("\n").filter((l) => l.startsWith("rollgate_agent_requests_read"));
    console.log(
      `${side.name}: gateway CPU per turn ${perTurn.toFixed(2)} ms (mean), ${
        (perTurn / floor).toFixed(1)
      }× the floor; by thread, ms/turn: ${
        byThread.map(([n, ms]) => `${n} ${ms.toFixed(2)}`).join(", ")
      }${read.length ? `; agent requests read: ${read.join(", ")}` : ""}`,
    );
  }
  if (allocations) {
    const total = allocations.reduce((a, { bytes }) => a + bytes, 0);
    console.log(
      `allocated per turn, by function (sampled; the top ${allocations.length}: ${
        (total / TURNS / 1024).toFixed(0)
      } kB a turn):`,
    );
    for (const { where, bytes } of allocations) {
      console.log(`  ${(bytes / TURNS / 1024).toFixed(1).padStart(7)} kB  ${where}`);
    }
  }
  if (profile) {
    const parts = [...profile.parts].filter(([p]) => p !== "(idle)").sort((a, b) => b[1] - a[1]);
    console.log(`event loop by part (CPU profile, ms per turn):`);
    for (const [part, ms] of parts) console.log(`  ${(ms / TURNS).toFixed(3)}  ${part}`);
    const top = Number(flag("top") ?? 0);
    const leaves = [...profile.leaves].sort((a, b) => b[1] - a[1]).slice(0, top);
    if (top) console.log(`the ${top} costliest stacks (leaf ← callers), ms per turn:`);
    for (const [where, ms] of leaves) console.log(`  ${(ms / TURNS).toFixed(3)}  ${where}`);
  }
} finally {
  for (const side of sides) {
    const stats = await side.trainers.stop();
    console.log(`${side.name} trainer: ${JSON.stringify(stats)}`);
    await side.gw.stop();
  }
  console.log(`load at the end ${loadavg()}`);
}
