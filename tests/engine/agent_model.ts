/**
 * A tiny model that drives real agent CLIs, made by the tests: a random model never calls a tool,
 * so the tiny Qwen3 ({@link tinyQwen3}) is fine-tuned on the CLIs' own prompts until its greedy
 * answers are the e2e scenario's turns (`tests/e2e/cli_scenario.ts`: a shell command that creates
 * a file and lists the directory, then the final answer).
 *
 * How: each CLI runs the scenario twice through a real gateway in gate mode with the scripted
 * policy double answering (`ScriptedPolicy`), so the prompts are exactly what rollgate renders for
 * that CLI; the rollouts' samples are the training data, and `clients/python/examples/sft_samples.py`
 * learns them (sliding attention window, the runs' temporary paths, the date and the kernel
 * version varied so the answer does not hinge on them). The weights are kept in
 * {@link MODEL_CACHE} under a name keyed by what they depend on (the CLIs and their pinned
 * versions and launch arguments, the scenario, the recipe: the trainer's source and options), and
 * made when missing.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { claudeCode, type Harness, type LaunchOptions, runLocal } from "../../harness/mod.ts";
import {
  api,
  COMMAND,
  FINAL_TEXT,
  makeWorkdir,
  MODEL_ID,
  PROMPT,
  RUN_BUDGET_MS,
  scenarioMessages,
  scenarioScript,
} from "../e2e/cli_scenario.ts";
import { startGateway } from "../support/gateway_process.ts";
import { ScriptedPolicy } from "../support/scripted_policy.ts";
import { enginePython, MODEL_CACHE, tinyQwen3 } from "../support/vllm_server.ts";

/** The test group of every real-engine test (named on `npm test`'s summary line when skipped). */
export const ENGINE_GROUP = "real engine (vLLM CPU)";

const ROOT = decodeURIComponent(new URL("../../", import.meta.url).pathname);
const SFT = `${ROOT}clients/python/examples/sft_samples.py`;

/**
 * Claude Code 2.1.330 sends ~25k tokens of tools and system prompt by default; with only its Bash
 * tool and a one-line system prompt the first request is ~1.5k ids, which keeps the engine's
 * recompute of every sample cheap. Still the real CLI: its own flags, its own Bash tool.
 */
export const leanClaudeCode: Harness = {
  ...claudeCode,
  args: (prompt: string, o: LaunchOptions) => [
    ...claudeCode.args(prompt, o),
    "--tools",
    "Bash",
    "--system-prompt",
    "You are a coding agent. Use the Bash tool to run shell commands.",
  ],
};

/** The recipe: part of the cache key, so a change makes new weights. */
const RECIPE = { base: "tiny-qwen3-seed0", runsPerAgent: 2, window: 64, floor: 0.9, seed: 0 };

/** What the weights depend on, as a short hash. */
async function modelKey(agents: Harness[]): Promise<string> {
  const probe: LaunchOptions = {
    gatewayUrl: "http://gateway",
    rolloutId: "r",
    token: "t",
    model: MODEL_ID,
    workdir: "/w",
    home: "/h",
  };
  const facts = {
    agents: agents.map((h) => ({ name: h.name, version: h.version, args: h.args(PROMPT, probe) })),
    task: { PROMPT, COMMAND, FINAL_TEXT, messages: agents.map((h) => scenarioMessages(h)) },
    recipe: RECIPE,
    trainer: await Deno.readTextFile(SFT),
  };
  return createHash("sha256").update(JSON.stringify(facts)).digest("hex").slice(0, 12);
}

/** What {@link agentModel} did. */
export interface AgentModel {
  dir: string;
  /** Set when the weights were made now: recording the prompts, training. */
  made?: { recordMs: number; trainMs: number; steps: number };
}

/** Records every agent's scenario `RECIPE.runsPerAgent` times; returns the samples and the texts to vary. */
async function recordSamples(agents: Harness[]): Promise<{ samples: unknown[]; vary: string[] }> {
  const gw = await startGateway(["--no-journal"]);
  const samples: unknown[] = [], vary = [Deno.osRelease()];
  try {
    for (const h of agents) {
      for (let run = 0; run < RECIPE.runsPerAgent; run++) {
        const tmp = await Deno.makeTempDir({ prefix: `rollgate-engine-${h.name}-` });
        vary.push(tmp);
        const rollout = await api(gw, "/api/rollouts", {});
        const policy = new ScriptedPolicy(gw.url, scenarioScript(h), { rollout: rollout.id })
          .start();
        try {
          await makeWorkdir(`${tmp}/work`);
          const result = await runLocal(h, PROMPT, {
            gatewayUrl: gw.url,
            rolloutId: rollout.id,
            token: rollout.token,
            model: MODEL_ID,
            workdir: `${tmp}/work`,
            home: `${tmp}/home`,
          }, { timeoutMs: RUN_BUDGET_MS });
          if (!result.completion.ok) {
            throw new Error(`recording ${h.name}: ${result.completion.error}\n${result.stderr}`);
          }
        } finally {
          await policy.stop();
          await Deno.remove(tmp, { recursive: true }).catch(() => {});
        }
        const finished = await api(gw, `/api/rollouts/${rollout.id}/finish`, {});
        if (finished.samples.length !== 1) throw new Error(`recording ${h.name}: not one chain`);
        samples.push(...finished.samples);
      }
    }
  } finally {
    await gw.stop();
  }
  return { samples, vary };
}

/**
 * The directory of a model whose greedy answers drive every CLI of `agents` through the
 * scenario; made (recorded and trained, ~1–3 minutes on 2 cores) when the cache lacks it.
 */
export async function agentModel(agents: Harness[]): Promise<AgentModel> {
  const name = `agents-${agents.map((h) => `${h.name}${h.version}`).join("-")}-${await modelKey(
    agents,
  )}`;
  const dir = `${MODEL_CACHE}/${name}`;
  try {
    await Deno.stat(`${dir}/.complete`);
    return { dir };
  } catch { /* not made yet */ }
  const base = await tinyQwen3(RECIPE.seed);
  const t0 = performance.now();
  const { samples, vary } = await recordSamples(agents);
  const t1 = performance.now();
  const tmp = `${dir}.tmp-${Deno.pid}`;
  const samplesFile = `${tmp}.samples.jsonl`;
  await Deno.writeTextFile(samplesFile, samples.map((s) => JSON.stringify(s)).join("\n") + "\n");
  try {
    const out = await enginePython([
      "-u",
      SFT,
      base,
      samplesFile,
      tmp,
      ...vary.flatMap((v) => ["--vary", v]),
      "--window",
      String(RECIPE.window),
      "--floor",
      String(RECIPE.floor),
      "--seed",
      String(RECIPE.seed),
    ]);
    const result = JSON.parse(out.trim().split("\n").findLast((l) => l.startsWith("{"))!);
    await Deno.writeTextFile(`${tmp}/.complete`, JSON.stringify({ samples: samples.length }));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.rename(tmp, dir);
    const trainMs = Math.round(performance.now() - t1);
    return { dir, made: { recordMs: Math.round(t1 - t0), trainMs, steps: result.steps } };
  } finally {
    await Deno.remove(samplesFile).catch(() => {});
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}
