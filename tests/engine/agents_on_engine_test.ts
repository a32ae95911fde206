/**
 * Real agent CLIs driven by a real engine: a real vLLM (CPU build) serves a tiny Qwen3 fine-tuned
 * by the tests to drive them (`agent_model.ts`), greedy, and every id the agents receive is one it
 * sampled. Claude Code (Anthropic Messages) goes through the gate, resolved by the Python gate
 * worker `clients/python/examples/vllm_gate_worker.py` against vLLM; pi (OpenAI Chat) through the
 * gateway's own `--backend vllm`. Each does the e2e scenario: a shell command that really runs
 * (the file appears in the workspace), its output in the next prompt, the final answer.
 *
 * Over each rollout: one chain, every sampled id trained in exactly one sample
 * (`checkLossOwnership`), and every trained position's recorded logprob equal to vLLM's recompute
 * of the sample within 1e-3 with the id the engine's argmax there (`checkEngineTruth`, greedy).
 *
 * One vLLM for the file (start 40–90 s on 2 cores, more under load); the model is made when the
 * cache lacks it. The times of each part are printed.
 *
 * @module
 */
import assert from "node:assert/strict";
import { claudeCode, describeRun, type Harness, pi, runLocal, tail } from "../../harness/mod.ts";
import type { TurnTreeExport } from "../../trajectory/mod.ts";
import {
  api,
  FILE_NAME,
  FILE_TEXT,
  FINAL_TEXT,
  makeWorkdir,
  MODEL_ID,
  PROMPT,
  RUN_BUDGET_MS,
} from "../e2e/cli_scenario.ts";
import { checkEngineTruth } from "../support/engine_truth.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { checkLossOwnership } from "../support/loss_ownership.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";
import { engineMissing, startVllm, type VllmServer } from "../support/vllm_server.ts";
import { agentModel, ENGINE_GROUP, leanClaudeCode } from "./agent_model.ts";

const ROOT = decodeURIComponent(new URL("../../", import.meta.url).pathname);
const GATE_WORKER = `${ROOT}clients/python/examples/vllm_gate_worker.py`;
/** Claude Code asks for 32,000 output tokens; vLLM refuses a request longer than its context. */
const MAX_MODEL_LEN = 40960;

const AGENTS = [leanClaudeCode, pi];

/** Who resolves the turns: the gate with the Python worker, or the gateway's vLLM backend. */
type Route = "gate worker" | "vllm backend";

/** The Python gate worker against vLLM, serving one rollout until `stop`. */
function startGateWorker(gw: GatewayProcess, vllm: VllmServer, rollout: string) {
  const child = new Deno.Command("python3", {
    args: [
      GATE_WORKER,
      "--gateway",
      gw.url,
      "--vllm",
      vllm.url,
      "--model",
      vllm.servedName,
      "--rollout",
      rollout,
      "--temperature",
      "0",
      "--concurrency",
      "1",
      "--poll-wait",
      "1",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  return {
    /** SIGTERM (the worker finishes its poll and exits); resolves to what it logged. */
    async stop(): Promise<string> {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 15_000);
      const out = await output;
      clearTimeout(timer);
      return new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    },
  };
}

/** `rollgate_turns_total{outcome="done"}` of `/metrics`, by backend. */
async function turnsDoneByBackend(gw: GatewayProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line.startsWith("rollgate_turns_total{") || !line.includes('outcome="done"')) continue;
    const backend = /backend="([^"]*)"/.exec(line)![1];
    out[backend] = Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return out;
}

async function runOnEngine(h: Harness, vllm: VllmServer, route: Route): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: `rollgate-engine-${h.name}-` });
  const gw = await startGateway(
    route === "vllm backend"
      ? ["--backend", "vllm", "--vllm-url", vllm.url, "--engine-model", vllm.servedName]
      : [],
  );
  let worker: ReturnType<typeof startGateWorker> | undefined;
  let workerLog = "";
  let run: Awaited<ReturnType<typeof runLocal>> | undefined;
  try {
    await makeWorkdir(`${tmp}/work`);
    const rollout = await api(gw, "/api/rollouts", {
      sampling: { temperature: 0 },
      metadata: { harness: h.name },
    });
    if (route === "gate worker") worker = startGateWorker(gw, vllm, rollout.id);
    run = await runLocal(h, PROMPT, {
      gatewayUrl: gw.url,
      rolloutId: rollout.id,
      token: rollout.token,
      model: MODEL_ID,
      workdir: `${tmp}/work`,
      home: `${tmp}/home`,
    }, { timeoutMs: RUN_BUDGET_MS });
    console.log(`${h.name} on vLLM (${route}): CLI run ${run.durationMs} ms`);
    if (worker) {
      workerLog = await worker.stop();
      worker = undefined;
    }
    assert.ok(run.completion.ok, `the CLI's completion says ok: ${run.completion.error}`);
    assert.equal(run.completion.finalText?.trim(), FINAL_TEXT, "the engine's final answer");
    assert.equal(
      await Deno.readTextFile(`${tmp}/work/${FILE_NAME}`),
      `${FILE_TEXT}\n`,
      "the engine's tool call really ran in the workspace",
    );

    const summary = await api(gw, `/api/rollouts/${rollout.id}`);
    assert.deepEqual(summary.turn_list.map((t) => t.status), ["done", "done"], "two turns");
    assert.deepEqual(
      await turnsDoneByBackend(gw),
      { [route === "vllm backend" ? "vllm" : "gate"]: 2 },
      "who generated, by the gateway's own count",
    );
    if (route === "gate worker") {
      const completed = /completed=(\d+)/.exec(workerLog)?.[1];
      assert.equal(completed, "2", `the gate worker completed both turns:\n${tail(workerLog)}`);
    }
    const { samples } = await api(gw, `/api/rollouts/${rollout.id}/finish`, { reward: 1 });
    assert.equal(samples.length, 1, "one linear conversation, one chain, one sample");
    assert.equal(samples[0].branch, "main");
    const tree = await api<TurnTreeExport>(gw, `/api/rollouts/${rollout.id}/tree`);
    checkLossOwnership(tree, samples);
    const truth = await checkEngineTruth(vllm.url, vllm.servedName, samples[0], 1e-3, {
      greedy: true,
    });
    assert.equal(truth.trained, samples[0].num_sampled, "every sampled id was checked");
    console.log(
      `${h.name}: ${truth.trained} sampled ids, max |recorded − recomputed| ${
        truth.maxAbsDiff.toExponential(2)
      }`,
    );
  } catch (e) {
    console.error(
      [
        `=== ${h.name} on vLLM (${route}) failed ===`,
        run ? describeRun(run) : "(the CLI did not finish)",
        `--- gate worker ---\n${tail(workerLog || "(none)")}`,
        `--- gateway (tail) ---\n${tail(gw.output())}`,
        `--- vLLM (tail) ---\n${tail(vllm.log(), 2000)}`,
      ].join("\n"),
    );
    throw e;
  } finally {
    await worker?.stop();
    await gw.stop();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

const missing = engineMissing() ?? cliMissing(claudeCode) ?? cliMissing(pi);

Deno.test({
  name: `${ENGINE_GROUP}: Claude Code (gate + vllm_gate_worker.py) and pi (--backend vllm) ` +
    "driven by a tiny model on vLLM" + (missing ? ` [skipped: ${missing}]` : ""),
  ignore: skipGroup(ENGINE_GROUP, missing),
  async fn(t) {
    let started = performance.now();
    const model = await agentModel(AGENTS);
    console.log(
      model.made
        ? `agent model made in ${Math.round(performance.now() - started)} ms ` +
          `(recording ${model.made.recordMs} ms, training ${model.made.trainMs} ms, ` +
          `${model.made.steps} steps)`
        : `agent model cached (${model.dir})`,
    );
    started = performance.now();
    // The RL API (`/inference/v1/generate`) for the gateway's vLLM backend: the ids go in and out
    // as ids, nothing re-tokenized.
    const vllm = await startVllm({ model: model.dir, maxModelLen: MAX_MODEL_LEN, scaleOut: true });
    console.log(`vLLM up in ${Math.round(performance.now() - started)} ms`);
    try {
      await t.step(
        "Claude Code: the gate resolved by vllm_gate_worker.py",
        () => runOnEngine(leanClaudeCode, vllm, "gate worker"),
      );
      await t.step("pi: --backend vllm", () => runOnEngine(pi, vllm, "vllm backend"));
    } finally {
      await vllm.stop();
    }
  },
});
