/**
 * Per-turn gateway time for the GLM and Kimi K2 families at ~32k and ~128k tokens: the delta turn
 * (mount, delta render of the new tool result, segment-cached tokenization, prompt-id assembly,
 * generation by an instant test double, parse, record) next to a full re-render (the family's
 * whole-history text render, tokenized from scratch). The policy's sampled turns are the
 * family's own answer render of each agent step. The tokenizers are the named tokenizer doubles
 * of the family tests (the Qwen3 vocabulary plus the family's special tokens): no package ships
 * GLM's or Kimi's tokenizer files.
 *
 *     ./node_modules/.bin/deno bench -A bench/family_turn_bench.ts
 *
 * @module
 */
import type { AssistantMessage, Message } from "../canonical/mod.ts";
import { PolicyModel, type TextRenderer, TokenizedRenderer } from "../model/mod.ts";
import { promptIds, RolloutStore, TurnRunner } from "../trajectory/mod.ts";
import { tokenizerDoubleDir } from "../tests/support/tokenizer_doubles.ts";
import { type AgentStep, TOOLS } from "./agent_history.ts";
import { InstantBackend } from "./instant_backend.ts";
import { chatRequest, newToolResult, type PrimedRollout, primeRollout } from "./turn_fixture.ts";

console.log(
  `load average before setup: ${Deno.loadavg().join(" ")} (${navigator.hardwareConcurrency} cores)`,
);

/** A step as the assistant message the agent gets back (Kimi K2 ids are the policy's own). */
function stepMessage(step: AgentStep, family: string, n: number): AssistantMessage {
  const id = family === "kimi-k2" ? `functions.${step.tool}:${n}` : `call_${n}`;
  return {
    role: "assistant",
    content: "",
    ...(family === "kimi-k2" ? {} : { reasoning_content: step.reasoning }),
    tool_calls: [{ id, name: step.tool, arguments: JSON.stringify(step.args) }],
  };
}

const SIZES = [
  { label: "32k", target: 32_000, full: { n: 30, warmup: 2 } },
  { label: "128k", target: 128_000, full: { n: 20, warmup: 1 } },
];

for (const family of ["glm-5", "kimi-k2"] as const) {
  const dir = await tokenizerDoubleDir(family);
  const model = await PolicyModel.load({ dir, family });
  await Deno.remove(dir, { recursive: true });
  const renderer = model.format.renderer;
  if (!(renderer instanceof TokenizedRenderer)) throw new Error(`${family}: not rendered in code`);
  const text: TextRenderer = renderer.text;
  const backend = new InstantBackend();
  const runner = new TurnRunner(model, backend);
  const store = new RolloutStore();
  let steps = 0;
  const sample = (step: AgentStep) => model.renderAnswerIds(stepMessage(step, family, steps++));

  /** The full re-render path: whole-history text render + uncached tokenization. */
  const fullRender = (messages: Message[]) =>
    model.tokenizer.encode(text.render(messages, TOOLS, { addGenerationPrompt: true }));

  for (const size of SIZES) {
    const primed: PrimedRollout = await primeRollout(model, runner, backend, store, {
      id: `bench-${family}-${size.label}`,
      targetTokens: size.target,
      lines: [10, 70],
      seed: size.target,
      sample,
    });
    const measured = await sample({ reasoning: "Run it.", tool: "bash", args: {}, output: "" });
    backend.answerWith(measured);
    let counter = 0;
    const deltaTurn = async () => {
      const req = chatRequest([...primed.history, newToolResult(primed.lastCallId, ++counter)]);
      const turn = await runner.start(primed.rollout, req, "call_");
      await turn.result;
      return turn;
    };

    // Sanity: the measured turn extends the history; how its prompt compares with a full render.
    const probe = await deltaTurn();
    primed.reset();
    if (probe.mount !== "extend") throw new Error(`${family} ${size.label}: ${probe.mount}`);
    const bridged = promptIds(probe);
    const full = await fullRender(probe.messages);
    const same = bridged.length === full.length && bridged.every((id, i) => id === full[i]);
    console.log(
      `${family} ${size.label}: ${primed.rollout.turns.length} recorded turns, measured prompt ` +
        `${bridged.length} tokens (delta ${probe.deltaIds.length}); delta prompt_ids ` +
        `${same ? "==" : "!="} full render (${full.length}${
          same ? "" : ", old reasoning dropped"
        })`,
    );

    Deno.bench({
      name: `${family} delta turn ${size.label}`,
      group: `${family} ${size.label}`,
      baseline: true,
      async fn(b) {
        b.start();
        const turn = await deltaTurn();
        b.end();
        primed.reset();
        if (turn.mount !== "extend") throw new Error(`turn mounted as ${turn.mount}`);
      },
    });
    Deno.bench({
      name: `${family} full re-render ${size.label}`,
      group: `${family} ${size.label}`,
      n: size.full.n,
      warmup: size.full.warmup,
      async fn(b) {
        const messages = [...primed.history, newToolResult(primed.lastCallId, ++counter)];
        b.start();
        await fullRender(messages);
        b.end();
      },
    });
  }
}
