/**
 * Per-turn gateway time for agent histories of ~1k, ~32k and ~128k Qwen3 tokens.
 *
 * - `delta`: one new turn on a rollout that already holds the history as recorded turns: mount,
 *   delta render, tokenize (segment cache), prompt-id assembly, generation by an instant test
 *   double, parse, record. This is what the gateway does per agent request.
 * - `full re-render`: what a gateway without delta rendering does for the same request: render
 *   the whole history with the chat template and tokenize the text from scratch.
 * - `http chat e2e`: the delta turn at 32k end to end over real loopback HTTP: an agent POSTs
 *   the whole history to the Chat endpoint (streaming) while a trainer takes the pending request
 *   and completes it through the trainer API.
 *
 *     deno task bench        # = deno bench -A bench/
 *
 * @module
 */
import { PolicyModel, toTemplateMessages, toTemplateTools } from "../model/mod.ts";
import type { Message } from "../canonical/mod.ts";
import { promptIds, RolloutStore, TurnRunner } from "../trajectory/mod.ts";
import { TOOLS } from "./agent_history.ts";
import { chatBody, startHttpGateway } from "./http_fixture.ts";
import { InstantBackend } from "./instant_backend.ts";
import {
  benchDeltaTurn,
  chatRequest,
  freshToolResult,
  MEASURED_OUTPUT,
  newToolResult,
  nextMessages,
  type PrimedRollout,
  primeRollout,
} from "./turn_fixture.ts";

console.log(
  `load average before setup: ${Deno.loadavg().join(" ")} (${navigator.hardwareConcurrency} cores)`,
);
const model = await PolicyModel.load();
const backend = new InstantBackend();
const runner = new TurnRunner(model, backend);
const store = new RolloutStore();
const measuredOutputIds = await model.tokenizer.encode(MEASURED_OUTPUT);

/** The full re-render path: whole-history template render + uncached tokenization. */
async function fullRender(messages: Message[]): Promise<number[]> {
  const text = model.template!.render(toTemplateMessages(messages), toTemplateTools(TOOLS), {
    addGenerationPrompt: true,
    kwargs: model.templateKwargs,
  });
  return await model.tokenizer.encode(text);
}

/** One delta turn on the primed rollout (recorded; call `primed.reset()` to drop it). */
async function deltaTurn(primed: PrimedRollout, n: number) {
  const req = chatRequest([...primed.history, newToolResult(primed.lastCallId, n)]);
  const turn = await runner.start(primed.rollout, req, "call_");
  await turn.result;
  return turn;
}

interface Size {
  label: string;
  target: number;
  lines: [number, number];
  /** Options for the slow full re-render bench. */
  full: { n: number; warmup: number };
}

const SIZES: Size[] = [
  { label: "1k", target: 1_000, lines: [3, 8], full: { n: 100, warmup: 5 } },
  { label: "32k", target: 32_000, lines: [10, 70], full: { n: 30, warmup: 2 } },
  { label: "128k", target: 128_000, lines: [10, 70], full: { n: 20, warmup: 1 } },
];

for (const size of SIZES) {
  const primed = await primeRollout(model, runner, backend, store, {
    id: `bench-${size.label}`,
    targetTokens: size.target,
    lines: size.lines,
    seed: size.target,
  });
  backend.answerWith(measuredOutputIds);

  // Sanity: the measured turn extends the history, and its prompt is what a full render gives.
  const probe = await deltaTurn(primed, 0);
  const bridged = Array.from(promptIds(probe));
  const full = await fullRender(probe.messages);
  const same = bridged.length === full.length && bridged.every((id, i) => id === full[i]);
  primed.reset();
  if (probe.mount !== "extend") throw new Error(`${size.label}: probe turn is ${probe.mount}`);
  const drifted = primed.rollout.turns.filter((t) => t.drift).length;
  console.log(
    `${size.label}: ${primed.rollout.turns.length} recorded turns (${drifted} with drift), ` +
      `${primed.history.length} messages, measured prompt ${bridged.length} tokens ` +
      `(delta ${probe.deltaIds.length}); delta prompt_ids ${same ? "==" : "!="} full render ` +
      `(${full.length})`,
  );

  benchDeltaTurn(`delta turn ${size.label}`, size.label, runner, primed);
  Deno.bench({
    name: `full re-render ${size.label}`,
    group: size.label,
    n: size.full.n,
    warmup: size.full.warmup,
    async fn(b) {
      const messages = nextMessages(primed);
      b.start();
      await fullRender(messages);
      b.end();
    },
  });
}

// End to end over HTTP at 32k.
const http = await startHttpGateway(model);
const httpPrimed = await http.prime(32_000, [10, 70], 32_000);
console.log(`http 32k: measured prompt ~${httpPrimed.promptTokens} tokens`);
Deno.bench({
  name: "http chat e2e 32k (delta, streaming)",
  group: "32k http",
  n: 200,
  async fn(b) {
    const request = chatBody(
      [...httpPrimed.history, freshToolResult(httpPrimed.lastCallId)],
      true,
    );
    b.start();
    const body = await http.turn(request, measuredOutputIds);
    b.end();
    httpPrimed.reset();
    if (!body.includes("data: [DONE]")) throw new Error(`unexpected stream: ${body.slice(0, 200)}`);
  },
});
