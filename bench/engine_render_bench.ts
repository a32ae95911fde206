/**
 * Per-turn cost of an engine-rendered turn (`--model-family engine`: vLLM renders the whole
 * history, rollgate checks the prefix, vLLM's parsers read the answer) beside a delta-rendered
 * one (the qwen3 family), end to end over loopback HTTP: an agent POSTs the whole history to the
 * Chat endpoint, a trainer takes the pending request and completes it through the trainer API at
 * once (no generation), at agent histories of ~1k, ~8k and ~32k tokens. Both gateways are primed
 * with the same agent history (every primed turn extends the one before in both), and the two
 * cases alternate turn by turn, so they share the machine's load.
 *
 * Floors, measured in the same run: an HTTP round trip to the gateway (`GET /health`), and the
 * two engine calls of the same turn made directly (`VllmRender.render` of the conversation, then
 * `parse` of the answer with that prompt): together, what an engine-rendered turn cannot cost less
 * than.
 *
 * Starts the CPU vLLM (`tests/support/vllm_server.ts`, `--enable-scale-out` and the hermes tool
 * parser; one server, ~5 GB) and stops it at the end:
 *
 *     node_modules/.bin/deno run -A bench/engine_render_bench.ts
 *
 * @module
 */
import { PolicyModel } from "../model/mod.ts";
import { VllmRender } from "../generation/mod.ts";
import { toCanonicalRequest } from "../gateway/agent/openai_chat/mod.ts";
import { startVllm, tinyQwen3 } from "../tests/support/vllm_server.ts";
import { chatBody, type PrimedHttpRollout, startHttpGateway } from "./http_fixture.ts";
import { freshToolResult, MEASURED_OUTPUT } from "./turn_fixture.ts";

const SIZES = [
  { label: "1k", target: 1_000, n: 40 },
  { label: "8k", target: 8_000, n: 30 },
  { label: "32k", target: 32_000, n: 20 },
];
const WARMUP = 3;

const load = () => Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
console.log(`load average before setup: ${load()} (${navigator.hardwareConcurrency} cores)`);

const dir = await tinyQwen3();
const vllm = await startVllm({
  model: dir,
  maxModelLen: 40_960,
  args: ["--enable-scale-out", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
});
try {
  const qwen3 = await PolicyModel.load();
  const rendering = new VllmRender({ url: vllm.url, model: vllm.servedName });
  const engine = await PolicyModel.load({ family: "engine", dir, rendering });
  const measuredIds = await qwen3.tokenizer.encode(MEASURED_OUTPUT);
  const rows: string[] = [];
  console.log(`load average after setup: ${load()}`);
  for (const size of SIZES) {
    // A gateway pair per size: one rollout each, whose first request a second priming would
    // repeat (a client retry, answered from the recorded turn).
    const delta = await startHttpGateway(qwen3);
    const rendered = await startHttpGateway(engine, qwen3);
    const seed = size.target;
    const primed = {
      delta: await delta.prime(size.target, [10, 70], seed),
      rendered: await rendered.prime(size.target, [10, 70], seed),
    };
    if (primed.delta.promptTokens !== primed.rendered.promptTokens) {
      throw new Error(`${size.label}: the two primed histories differ in length`);
    }
    const deltaTimes: number[] = [], engineTimes: number[] = [];
    const renderFloor: number[] = [], parseFloor: number[] = [], httpFloor: number[] = [];
    const times = {
      "delta-rendered turn (qwen3 family)": deltaTimes,
      "engine-rendered turn (engine family)": engineTimes,
      "floor: the engine's render, called directly": renderFloor,
      "floor: the engine's parse, called directly": parseFloor,
      "floor: HTTP round trip (GET /health)": httpFloor,
    };
    const turn = async (
      gw: typeof delta,
      p: PrimedHttpRollout,
      into: number[] | null,
    ): Promise<string> => {
      const body = chatBody([...p.history, freshToolResult(p.lastCallId)], false);
      const started = performance.now();
      await gw.turn(body, measuredIds);
      into?.push(performance.now() - started);
      p.reset();
      return body;
    };
    const engineCalls = async (body: string, keep: boolean) => {
      const request = toCanonicalRequest(JSON.parse(body));
      let started = performance.now();
      const promptIds = await rendering.render({
        messages: request.messages,
        tools: request.tools,
        templateKwargs: {},
        addGenerationPrompt: true,
      });
      if (keep) renderFloor.push(performance.now() - started);
      started = performance.now();
      await rendering.parse({
        promptIds,
        outputIds: measuredIds.filter((id) => id !== qwen3.endOfTurnId),
        tools: request.tools,
        templateKwargs: {},
      });
      if (keep) parseFloor.push(performance.now() - started);
    };
    for (let i = 0; i < WARMUP + size.n; i++) {
      const keep = i >= WARMUP;
      await turn(delta, primed.delta, keep ? deltaTimes : null);
      const body = await turn(rendered, primed.rendered, keep ? engineTimes : null);
      await engineCalls(body, keep);
      const started = performance.now();
      await (await fetch(`${delta.url}/health`)).body?.cancel();
      if (keep) httpFloor.push(performance.now() - started);
    }
    for (const [name, ms] of Object.entries(times)) {
      ms.sort((a, b) => a - b);
      const avg = ms.reduce((a, b) => a + b, 0) / ms.length;
      const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))];
      rows.push(
        `| ${size.label} (${primed.delta.promptTokens}) | ${name} | ${avg.toFixed(1)} ms ` +
          `(${ms[0].toFixed(1)} … ${ms.at(-1)!.toFixed(1)}) | ${at(0.5).toFixed(1)} ms | ` +
          `${at(0.99).toFixed(1)} ms |`,
      );
    }
    console.log(`${size.label} done, load average ${load()}`);
    await delta.close();
    await rendered.close();
  }
  console.log("\n| history (tokens) | case | avg (min … max) | p50 | p99 |");
  console.log("| --- | --- | --- | --- | --- |");
  for (const row of rows) console.log(row);
  console.log(`\nload average at the end: ${load()}`);
} finally {
  await vllm.stop();
}
