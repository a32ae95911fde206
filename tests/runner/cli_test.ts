/**
 * `main.ts rollout` as a real subprocess: tasks from a SWE-bench-style JSONL file, the JSONL
 * results, the summary table on stdout, the progress on stderr, and resuming (a second run with
 * more samples runs only the new ones; a third runs nothing). Setup mistakes end with one clear
 * line and exit code 1, never a stack trace.
 */
import assert from "node:assert/strict";
import { pi } from "../../harness/mod.ts";
import type { RolloutRecord } from "../../runner/mod.ts";
import { SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { rolloutCommand, type RolloutCommandRun as Run, skipReason } from "./support.ts";
import { skipGroup } from "../support/skips.ts";

const TASKS = ["py-slug", "js-median"];
const rollout = rolloutCommand;

/** SWE-bench-style JSONL records for shipped tasks (repo_path = the shipped base repository). */
async function tasksJsonl(path: string): Promise<void> {
  const lines = [];
  for (const id of TASKS) {
    const dir = `${SHIPPED_TASKS_DIR}/${id}`;
    const meta = JSON.parse(await Deno.readTextFile(`${dir}/task.json`));
    delete meta.gold_patch;
    lines.push(JSON.stringify({
      ...meta,
      repo_path: `${dir}/repo`,
      patch: await Deno.readTextFile(`${dir}/gold.patch`),
      test_patch: await Deno.readTextFile(`${dir}/test.patch`),
    }));
  }
  await Deno.writeTextFile(path, lines.join("\n") + "\n");
}

async function records(path: string): Promise<RolloutRecord[]> {
  return (await Deno.readTextFile(path)).split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

const skip = skipReason(pi);
Deno.test({
  name: "main.ts rollout: JSONL records, summary, and resume skips recorded rollouts" +
    (skip ? ` [skipped: ${skip}]` : ""),
  ignore: skipGroup("runner command line (pi)", skip),
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-cli-" });
  try {
    await tasksJsonl(`${dir}/tasks.jsonl`);
    const out = `${dir}/results/out.jsonl`;
    const base = ["--tasks", `${dir}/tasks.jsonl`, "--harness", "pi", "--policy", "gold"];
    const more = ["--concurrency", "4", "--out", out, "--time-budget", "120"];

    const first = await rollout([...base, "--samples", "1", ...more]);
    const context = (r: Run) => `exit ${r.code}\n${r.stderr}\n${r.stdout}`;
    assert.equal(first.code, 0, context(first));
    assert.match(first.stderr, /2 rollout\(s\), 0 already in .*, 2 to run/);
    assert.match(first.stderr, /2\/2 done, 0 running, mean reward 1\.00/);
    const one = await records(out);
    assert.equal(one.length, 2);
    for (const r of one) {
      for (const key of ["rollout_id", "task", "sample", "harness", "reward", "tests", "diff"]) {
        assert.ok(key in r, `record has ${key}`);
      }
      for (const key of ["agent", "timings", "samples"]) assert.ok(key in r, `record has ${key}`);
      assert.deepEqual(Object.keys(r).slice(0, 10), [
        "rollout_id",
        "task",
        "sample",
        "harness",
        "reward",
        "tests",
        "diff",
        "agent",
        "timings",
        "samples",
      ]);
      assert.equal(r.reward, 1, JSON.stringify({ ...r, samples: undefined }));
      assert.equal(r.sample, 0);
      assert.equal(r.harness, "pi");
    }
    assert.match(first.stdout, /^py-slug\s+1\s+0\s+1\.00\s+1\.00$/m, first.stdout);
    assert.match(first.stdout, /^js-median\s+1\s+0\s+1\.00\s+1\.00$/m);
    assert.match(first.stdout, /^all\s+2\s+0\s+1\.00\s+1\.00$/m);

    const second = await rollout([...base, "--samples", "2", ...more]);
    assert.equal(second.code, 0, context(second));
    assert.match(second.stderr, /4 rollout\(s\), 2 already in .*, 2 to run/);
    const two = await records(out);
    assert.equal(two.length, 4);
    assert.deepEqual(two.slice(0, 2), one, "earlier records untouched");
    assert.deepEqual(
      two.map((r) => `${r.task}#${r.sample}`).sort(),
      ["js-median#0", "js-median#1", "py-slug#0", "py-slug#1"],
    );
    assert.equal(new Set(two.map((r) => r.rollout_id)).size, 4);
    assert.match(second.stdout, /^all\s+4\s+0\s+1\.00\s+1\.00\s+1\.00$/m, second.stdout);
    assert.match(second.stdout, /pass@2/);

    const third = await rollout([...base, "--samples", "2", ...more]);
    assert.equal(third.code, 0, context(third));
    assert.match(third.stderr, /all 4 rollout\(s\) already in .*; nothing to run/);
    assert.equal((await records(out)).length, 4, "nothing re-run");
    assert.match(third.stdout, /^all\s+4\s+0\s+1\.00\s+1\.00\s+1\.00$/m);
    console.log(`runs: ${first.ms} ms, ${second.ms} ms, ${third.ms} ms (resume, nothing to do)`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("main.ts rollout: setup mistakes end with one clear line, exit 1, no stack", async () => {
  const tasks = ["--tasks", `${SHIPPED_TASKS_DIR}/py-slug`];
  const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: "/nonexistent-home" };
  const cases: [string[], RegExp, Record<string, string>?][] = [
    [["--harness", "pi"], /^rollgate: --tasks is required/],
    [
      [...tasks, "--harness", "pi", "--backend", "vllm", "--policy", "gold"],
      /^rollgate: --policy is for --backend gate; this run's backend is vllm/,
    ],
    [
      [...tasks, "--harness", "pi", "--backend", "openai"],
      /^rollgate: --backend openai needs --upstream-openai-url \(the hosted API's base URL\)$/,
    ],
    [
      [
        ...tasks,
        "--harness",
        "pi",
        "--backend",
        "openai",
        "--upstream-openai-url",
        "http://127.0.0.1:9",
      ],
      /^rollgate: --upstream-openai-url http:\/\/127\.0\.0\.1:9 has no path: .*under \/v1; expected e\.g\. /,
    ],
    [
      [
        ...tasks,
        "--harness",
        "pi",
        "--backend",
        "openai",
        "--upstream-openai-url",
        "https://api.example/v1",
      ],
      /^rollgate: OPENAI_API_KEY is not set: the openai upstream at https:\/\/api\.example needs an API key$/,
    ],
    [
      [
        ...tasks,
        "--harness",
        "pi",
        "--backend",
        "anthropic",
        "--upstream-anthropic-url",
        "http://127.0.0.1:9",
      ],
      /^rollgate: --backend anthropic serves anthropic requests; pi speaks chat: choose openai$/,
    ],
    [
      [
        ...tasks,
        "--harness",
        "gemini-cli",
        "--backend",
        "openai",
        "--upstream-openai-url",
        "http://127.0.0.1:9/v1",
      ],
      /^rollgate: --backend openai serves chat and responses requests; gemini-cli speaks gemini: no hosted-API backend serves it \(use gate or vllm\)$/,
    ],
    [
      [...tasks, "--harness", "pi", "--backend", "vllm", "--vllm-url", "http://127.0.0.1:9"],
      /^rollgate: --vllm-url http:\/\/127\.0\.0\.1:9: no server answers: /,
    ],
    [
      ["--tasks", "/no/such/tasks", "--harness", "pi"],
      /^rollgate: tasks path \/no\/such\/tasks does not exist$/,
    ],
    [
      [...tasks, "--harness", "aider"],
      /^rollgate: unknown harness aider; known: claude-code, codex, pi, opencode, qwen-code, mini-swe-agent, gemini-cli$/,
    ],
    [
      [...tasks, "--harness", "pi", "--sandbox", "vm"],
      /^rollgate: unknown sandbox vm; known: local, docker, e2b$/,
    ],
    [
      [...tasks, "--harness", "pi", "--policy", "smart"],
      /^rollgate: unknown policy smart; known: gate, gold, noop$/,
    ],
    [
      [...tasks, "--harness", "pi", "--samples", "0"],
      /^rollgate: --samples must be a positive integer, got 0$/,
    ],
    [[...tasks, "--harness", "pi", "--bogus"], /^rollgate: Unknown option '--bogus'/],
    [
      [...tasks, "--harness", "pi", "--sandbox", "docker", "--image", "img"],
      /^rollgate: sandbox preflight failed: docker sandbox: .*\/no\/such\/docker\.sock/,
      { ...env, DOCKER_HOST: "unix:///no/such/docker.sock" },
    ],
    [
      [...tasks, "--harness", "pi", "--sandbox", "docker"],
      /^rollgate: --sandbox docker: tasks with image "local" need --image/,
    ],
    [[...tasks, "--harness", "pi", "--sandbox", "e2b"], /^rollgate: --sandbox e2b: .*--public-url/],
    [
      [...tasks, "--harness", "pi", "--sandbox", "e2b", "--public-url", "https://gw.example"],
      /^rollgate: sandbox preflight failed: E2B API key missing/,
      env,
    ],
  ];
  const runs = await Promise.all(cases.map(([args, , e]) => rollout(args, e ?? env)));
  runs.forEach((r, i) => {
    const [args, expected] = cases[i];
    const what = `${args.join(" ")}\n--- stderr ---\n${r.stderr}`;
    assert.equal(r.code, 1, what);
    const first = r.stderr.split("\n").find((l) => l.startsWith("rollgate:")) ?? "";
    assert.match(first, expected, what);
    assert.ok(!/^\s+at .*\.ts:\d+/m.test(r.stderr), `no stack trace: ${what}`);
  });
});
