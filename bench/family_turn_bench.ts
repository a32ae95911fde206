/**
 * Per-turn gateway time for every registered model family, at agent histories of ~32k and
 * ~128k tokens, next to a full re-render of the same history in the same family.
 *
 * Each family is loaded as the tests load it (`tests/support/family_models.ts`: real tokenizer
 * files, or a named tokenizer double), and the history is recorded turn by turn through a real
 * `TurnRunner` whose policy (the instant double) samples the family's own ids for each step
 * (`renderAnswer`: Qwen3's JSON calls, Qwen3.5's XML, DeepSeek's call tokens, …).
 *
 * - `delta`: one new turn on that rollout: mount, delta render in the family's format, tokenize
 *   (segment cache), prompt-id assembly, generation by the instant double, the family's parse,
 *   drift check, record. What the gateway does per agent request.
 * - `full render`: the family's whole-history render with ids from the segment cache (what
 *   rollgate would pay per turn without delta rendering).
 * - `full re-render`: the same text tokenized from scratch (what a peer pays per turn).
 *
 * Before measuring, the bench checks that the delta turn's prompt ids equal the full render's
 * (for a family whose history rewrites sampled answers, gpt-oss: that the delta ends it, and how
 * many earlier ids differ).
 *
 *     deno bench -A bench/family_turn_bench.ts
 *     ROLLGATE_BENCH_FAMILIES=qwen3.5,gpt-oss deno bench -A bench/family_turn_bench.ts
 *
 * @module
 */
import { FAMILIES, GENERIC_FAMILY, type PolicyModel } from "../model/mod.ts";
import { promptIds, RolloutStore, TurnRunner } from "../trajectory/mod.ts";
import { familyTestModel } from "../tests/support/family_models.ts";
import { stepMessage, TOOLS } from "./agent_history.ts";
import { InstantBackend } from "./instant_backend.ts";
import {
  benchDeltaTurn,
  chatRequest,
  MEASURED_STEP,
  newToolResult,
  nextMessages,
  type PrimedRollout,
  primeRollout,
} from "./turn_fixture.ts";

console.log(
  `load average before setup: ${Deno.loadavg().join(" ")} (${navigator.hardwareConcurrency} cores)`,
);

const SIZES = [
  { label: "32k", target: 32_000, full: { n: 20, warmup: 2 } },
  { label: "128k", target: 128_000, full: { n: 8, warmup: 1 } },
];

const only = Deno.env.get("ROLLGATE_BENCH_FAMILIES")?.split(",");
const families = [...FAMILIES, GENERIC_FAMILY].map((f) => f.name)
  .filter((name) => !only || only.includes(name));

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/** Registers the three benches of one family at one history size. */
function benchFamilySize(
  family: string,
  model: PolicyModel,
  runner: TurnRunner,
  primed: PrimedRollout,
  size: typeof SIZES[number],
): void {
  const group = `${family} ${size.label}`;
  benchDeltaTurn(`delta turn ${group}`, group, runner, primed);
  Deno.bench({
    name: `full render ${group}`,
    group,
    n: size.full.n,
    warmup: size.full.warmup,
    async fn(b) {
      const messages = nextMessages(primed);
      b.start();
      await model.renderFull(messages, TOOLS);
      b.end();
    },
  });
  Deno.bench({
    name: `full re-render ${group}`,
    group,
    n: size.full.n,
    warmup: size.full.warmup,
    async fn(b) {
      const messages = nextMessages(primed);
      b.start();
      const { text } = await model.renderFull(messages, TOOLS);
      await model.tokenizer.encode(text);
      b.end();
    },
  });
}

for (const family of families) {
  const { model } = await familyTestModel(family);
  const backend = new InstantBackend();
  const runner = new TurnRunner(model, backend);
  const store = new RolloutStore();
  const answerIds = (step: Parameters<typeof stepMessage>[0]) =>
    model.renderAnswerIds(stepMessage(step));
  const measured = await answerIds(MEASURED_STEP);
  for (const size of SIZES) {
    const primed = await primeRollout(model, runner, backend, store, {
      id: `bench-${family}-${size.label}`,
      targetTokens: size.target,
      lines: [10, 70],
      seed: size.target,
      answerIds,
    });
    backend.answerWith(measured);

    // The measured turn extends the history, and its prompt is what a full render gives.
    const probe = await runner.start(
      primed.rollout,
      chatRequest([...primed.history, newToolResult(primed.lastCallId, 0)]),
      "call_",
    );
    await probe.result;
    primed.reset();
    const delta = Array.from(promptIds(probe));
    const full = await model.renderFull(probe.messages, TOOLS);
    const fresh = await model.tokenizer.encode(full.text);
    const drifted = primed.rollout.turns.filter((t) => t.drift).length;
    // A family whose history rewrites sampled answers (gpt-oss: `to=` before the channel,
    // `<|return|>` → `<|end|>`) keeps the sampled ids, so its prompt differs from a full render
    // there; its delta (the new tool result + generation prompt) must still end the full render.
    const rewrites = model.format.quirks.rewritesAnswers ?? [];
    const tail = delta.slice(-probe.deltaIds.length);
    const same = rewrites.length > 0
      ? sameIds(full.ids.slice(-tail.length), tail)
      : sameIds(delta, full.ids);
    const differing = full.ids.filter((id, i) => id !== delta[i]).length;
    console.log(
      `${family} ${size.label}: ${primed.rollout.turns.length} recorded turns (${drifted} with ` +
        `drift), prompt ${delta.length} tokens (delta ${probe.deltaIds.length}); delta prompt ids ` +
        (rewrites.length > 0
          ? `${same ? "end" : "do not end"} the full render (${differing} ids differ where ` +
            `history rewrites answers: ${rewrites.join("; ")})`
          : `${same ? "==" : "!="} full render`) +
        `; full render ids ${sameIds(full.ids, fresh) ? "==" : "!="} whole-text tokenize`,
    );
    if (probe.mount !== "extend" || !same) {
      throw new Error(`${family} ${size.label}: the delta turn does not extend the full render`);
    }
    benchFamilySize(family, model, runner, primed, size);
  }
}
