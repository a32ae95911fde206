/**
 * `main.ts rollout --backend`: the agents served by a hosted API (black-box evaluation, against
 * the loopback TEST DOUBLE that replays the real CLIs' captured streams, `tests/black_box/`) and by
 * a vLLM server (the vLLM TEST DOUBLE, `tests/backends/fake_engines.ts`, scripted to solve the task
 * in one rollout out of three), each finishing with the summary table and pass@k.
 */
import assert from "node:assert/strict";
import { claudeCode, pi } from "../../harness/mod.ts";
import { qwen3SampledText } from "../../model/mod.ts";
import {
  applyPatchCommand,
  FINAL_TEXT,
  finalAnswerMessage,
  type RolloutRecord,
  shellActionMessage,
} from "../../runner/mod.ts";
import { loadTasks, SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import type { Message } from "../../canonical/mod.ts";
import { engineLogprob, FakeVllm } from "../backends/fake_engines.ts";
import { FakeUpstreamTestDouble } from "../black_box/fake_upstream.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { skipGroup } from "../support/skips.ts";
import { describe, rolloutCommand, runQuiet, skipReason } from "./support.ts";

const TASK = `${SHIPPED_TASKS_DIR}/py-slug`;

async function records(path: string): Promise<RolloutRecord[]> {
  return (await Deno.readTextFile(path)).split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

interface MessageSample {
  token_ids: false;
  group: string | null;
  input_ids: number[];
  messages: Message[];
}

/** One black-box run of `main.ts rollout` against the fake upstream; its records and output. */
async function blackBoxRun(backend: "openai" | "anthropic", harness: string) {
  const upstream = new FakeUpstreamTestDouble();
  const dir = await Deno.makeTempDir({ prefix: `rollgate-runner-${backend}-` });
  try {
    const url = backend === "openai" ? `${upstream.url}/v1` : upstream.url;
    const run = await rolloutCommand([
      "--tasks",
      TASK,
      "--harness",
      harness,
      "--backend",
      backend,
      `--upstream-${backend}-url`,
      url,
      "--upstream-model",
      "upstream-model-x",
      "--samples",
      "2",
      "--concurrency",
      "2",
      "--time-budget",
      "120",
      "--out",
      `${dir}/results.jsonl`,
    ], {
      ...Deno.env.toObject(),
      [backend === "openai" ? "OPENAI_API_KEY" : "ANTHROPIC_API_KEY"]: "upstream-key",
    });
    const context = `exit ${run.code}\n${run.stderr}\n${run.stdout}`;
    assert.equal(run.code, 0, context);
    return { run, context, upstream, url, file: await records(`${dir}/results.jsonl`) };
  } finally {
    await upstream.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** What every black-box run shows: the summary, the records, what the upstream received. */
function assertBlackBox(
  r: Awaited<ReturnType<typeof blackBoxRun>>,
  backend: string,
  path: RegExp,
  finalText: RegExp,
) {
  assert.match(r.run.stderr, new RegExp(`backend ${backend} at ${r.url} \\(black-box`), r.context);
  assert.match(
    r.run.stderr,
    /2\/2 done, 0 running, mean reward 0\.00; \d+s elapsed, [\d.]+\/min, all done/,
  );
  // The upstream replays a probe command, not a fix: graded, reward 0.
  assert.match(
    r.run.stdout,
    /^task\s+samples\s+errors\s+mean reward\s+pass@1\s+pass@2$/m,
    r.context,
  );
  assert.match(r.run.stdout, /^py-slug\s+2\s+0\s+0\.00\s+0\.00\s+0\.00$/m, r.context);
  assert.match(r.run.stdout, /^all\s+2\s+0\s+0\.00\s+0\.00\s+0\.00$/m);
  assert.equal(r.file.length, 2);
  for (const rec of r.file) {
    assert.equal(rec.error, undefined, describe(rec));
    assert.deepEqual([rec.backend, rec.policy, rec.reward], [backend, backend, 0]);
    assert.equal(rec.agent?.ok, true, describe(rec));
    assert.ok(rec.turns >= 2, describe(rec));
    assert.ok(rec.tests.length >= 2, "graded");
    // The upstream's tool call ran in the sandbox: its answer drove the agent.
    assert.match(rec.diff, /probe\.txt/, describe(rec));
    const samples = rec.samples as MessageSample[];
    assert.ok(samples.length >= 1);
    for (const s of samples) {
      assert.equal(s.token_ids, false, "a hosted model's tokens are not the policy's");
      assert.deepEqual(s.input_ids, []);
      assert.equal(s.group, "py-slug", "a task's samples are one group");
    }
    const main = samples.find((s) => s.messages.at(-1)?.role === "assistant")!;
    assert.match(String(main.messages.at(-1)!.content), finalText);
  }
  const calls = r.upstream.received.filter((x) => path.test(x.path));
  assert.ok(calls.length >= 4, `two turns per rollout reached the upstream: ${calls.length}`);
  for (const c of calls) {
    assert.equal(c.body.model, "upstream-model-x", "--upstream-model replaces the agent's");
    const auth = c.headers.get("authorization") ?? `Bearer ${c.headers.get("x-api-key")}`;
    assert.equal(auth, "Bearer upstream-key", "the key from the environment, not the rollout's");
  }
}

const piSkip = skipReason(pi);
Deno.test({
  name: "rollout --backend openai: pi on a task against an OpenAI-compatible upstream",
  ignore: skipGroup("runner black-box backend (pi)", piSkip),
}, async () => {
  const r = await blackBoxRun("openai", "pi");
  assertBlackBox(r, "openai", /\/v1\/chat\/completions$/, /^Done: created probe\.txt/);
});

const claudeSkip = skipReason(claudeCode);
Deno.test({
  name: "rollout --backend anthropic: Claude Code on a task against an Anthropic upstream",
  ignore: skipGroup("runner black-box backend (claude-code)", claudeSkip),
}, async () => {
  const r = await blackBoxRun("anthropic", "claude-code");
  assertBlackBox(r, "anthropic", /\/v1\/messages$/, /Done/);
});

Deno.test({
  name: "rollout --backend vllm: the engine's ids and logprobs recorded, pass@k over 3 samples",
  ignore: skipGroup("runner vLLM backend (pi)", piSkip),
}, async () => {
  const model = await sharedModel();
  const [task] = await loadTasks(TASK);
  const text = (m: Parameters<typeof qwen3SampledText>[0]) => qwen3SampledText(m);
  const gold = text(shellActionMessage(pi, "Apply the fix.", applyPatchCommand(task.gold_patch)));
  const applied = text(finalAnswerMessage(pi, "Applied.", FINAL_TEXT.applied));
  const noop = text(finalAnswerMessage(pi, "Nothing to do.", FINAL_TEXT.noop));
  // The engine solves the first rollout and leaves the others alone (one at a time: in order).
  let firstTurns = 0;
  const engine = new FakeVllm(model, ({ text }) => {
    if (text.includes("<tool_response>")) return applied;
    return firstTurns++ === 0 ? gold : noop;
  }).start();
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-vllm-" });
  try {
    const run = await runQuiet({
      tasks: TASK,
      harness: "pi",
      policy: "gate",
      backend: "vllm",
      vllmUrl: engine.url,
      samples: 3,
      concurrency: 1,
      out: `${dir}/results.jsonl`,
    });
    assert.match(run.log, /backend vllm at http:\/\/127\.0\.0\.1:\d+, concurrency 1/, run.log);
    assert.ok(!run.log.includes("waiting for a trainer"), "no trainer is asked for");
    assert.match(run.table, /^task\s+samples\s+errors\s+mean reward\s+pass@1\s+pass@2\s+pass@3$/m);
    // Rewards 1, 0, 0: pass@1 = 1/3, pass@2 = 1 − C(2,2)/C(3,2) = 2/3, pass@3 = 1.
    assert.match(run.table, /^py-slug\s+3\s+0\s+0\.33\s+0\.33\s+0\.67\s+1\.00$/m, run.table);
    assert.deepEqual(run.file.map((r) => r.reward).sort(), [0, 0, 1], run.log);
    for (const rec of run.file) {
      assert.equal(rec.error, undefined, describe(rec));
      assert.deepEqual([rec.backend, rec.policy], ["vllm", "vllm"]);
      for (
        const s of rec.samples as {
          group: string;
          logprobs: number[];
          loss_mask: number[];
          turn_spans: { output_start: number; end: number }[];
        }[]
      ) {
        assert.equal(s.group, "py-slug");
        let trained = 0;
        for (const span of s.turn_spans) {
          for (let i = span.output_start; i < span.end; i++) {
            assert.equal(
              s.logprobs[i],
              engineLogprob(i - span.output_start),
              "the engine's logprob",
            );
            trained += s.loss_mask[i];
          }
        }
        assert.equal(trained, s.loss_mask.reduce((a, b) => a + b, 0), "loss only on sampled ids");
        assert.ok(trained > 0);
      }
    }
    assert.equal(engine.generations.items.length, 4, "gold: 2 turns; noop: 1 turn each");
  } finally {
    await engine.close();
    await Deno.remove(dir, { recursive: true });
  }
});
