/**
 * The runner's pure parts: flag parsing, the patch command and the wrong patch (checked with real
 * git and bash), the scripted replies (checked with the real Qwen3 tokenizer and output parser,
 * and in DeepSeek V3.1's format),
 * the results file (resume keys, cut-off lines), the progress bar and the summary table.
 */
import assert from "node:assert/strict";
import { parseRolloutArgs } from "../../cli/rollout.ts";
import { miniSweAgent, pi } from "../../harness/mod.ts";
import {
  applyPatchCommand,
  FINAL_TEXT,
  formatSummary,
  passAtK,
  Progress,
  readRecords,
  recordKey,
  ResultsWriter,
  type RolloutRecord,
  scriptFor,
  summarize,
  wrongPatch,
} from "../../runner/mod.ts";
import { loadTasks, SHIPPED_TASKS_DIR, type SweTask } from "../../sandbox/mod.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { deepSeekV31ModelDir } from "../support/deepseek_v31_model.ts";
import { PolicyModel } from "../../model/mod.ts";
import { reportedKs } from "../../runner/pass_at_k.ts";
import { clockText } from "../../runner/report.ts";

const TASKS = await loadTasks(SHIPPED_TASKS_DIR);

async function sh(cmd: string, cwd: string): Promise<{ code: number; out: string }> {
  const o = await new Deno.Command("bash", {
    args: ["-c", cmd],
    cwd,
    env: { TMPDIR: cwd, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: o.code, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

/** A git repository holding `task`'s base files. */
async function baseRepo(task: SweTask, dir: string): Promise<void> {
  for (const f of task.files) {
    await Deno.mkdir(`${dir}/${f.path}`.replace(/\/[^/]*$/, ""), { recursive: true });
    await Deno.writeFile(`${dir}/${f.path}`, f.data);
  }
  const r = await sh("git init -q . && git add -A && git -c user.email=t@t commit -qm base", dir);
  assert.equal(r.code, 0, r.out);
}

Deno.test("flags: defaults, gate's port, and one-line errors", () => {
  const o = parseRolloutArgs(["--tasks", "tasks", "--harness", "pi"])!;
  assert.equal(o.sandbox, "local");
  assert.equal(o.policy, "gate");
  assert.equal(o.samples, 1);
  assert.equal(o.concurrency, 4);
  assert.equal(o.out, "results.jsonl");
  assert.equal(o.timeBudgetS, 600);
  assert.equal(o.model, "rollgate-policy");
  assert.equal(o.gatewayPort, undefined);
  assert.equal(parseRolloutArgs(["--help"]), undefined);
  const family = parseRolloutArgs([
    "--tasks",
    "t",
    "--harness",
    "pi",
    "--model-dir",
    "/m",
    "--model-family",
    "deepseek-v3.1",
    "--template-kwargs",
    '{"thinking": true}',
  ])!;
  assert.deepEqual(family.modelOptions, {
    dir: "/m",
    family: "deepseek-v3.1",
    toolParser: undefined,
    templateKwargs: { thinking: true },
  });
  const hidden = parseRolloutArgs(["--tasks", "t", "--harness", "pi", "--policy", "wrong"])!;
  assert.equal(hidden.policy, "wrong", "the self-test policy is accepted");
  assert.throws(() => parseRolloutArgs(["--tasks", "t", "--harness", "pi", "--concurrency", "x"]), {
    name: "UsageError",
    message: "--concurrency must be a positive integer, got x",
  });
  assert.throws(
    () => parseRolloutArgs(["--tasks", "t", "--harness", "pi", "--gateway-port", "70000"]),
    /--gateway-port must be a port number/,
  );
});

Deno.test("flags: --backend, its URL flags, and how --policy combines with it", () => {
  const base = ["--tasks", "t", "--harness", "pi"];
  assert.equal(parseRolloutArgs(base)!.backend, "gate");
  const vllm = parseRolloutArgs([...base, "--backend", "vllm", "--vllm-url", "http://e:8000"])!;
  assert.deepEqual([vllm.backend, vllm.vllmUrl, vllm.policy], ["vllm", "http://e:8000", "gate"]);
  const openai = parseRolloutArgs([
    ...base,
    "--backend",
    "openai",
    "--upstream-openai-url",
    "http://u/v1",
    "--upstream-model",
    "m",
  ])!;
  assert.deepEqual([openai.upstreamUrl, openai.upstreamModel], ["http://u/v1", "m"]);
  assert.throws(() => parseRolloutArgs([...base, "--backend", "sglang"]), {
    name: "RunnerError",
    message: "unknown backend sglang; known: gate, vllm, anthropic, openai",
  });
  // Scripted policies answer the gate; with an engine or an upstream nobody would run them.
  assert.throws(
    () => parseRolloutArgs([...base, "--backend", "vllm", "--policy", "gold"]),
    {
      name: "UsageError",
      message: "--policy is for --backend gate; this run's backend is vllm " +
        "(the engine or upstream answers every request)",
    },
  );
  assert.throws(
    () => parseRolloutArgs([...base, "--backend", "openai", "--upstream-anthropic-url", "x"]),
    /--upstream-anthropic-url is for --backend anthropic; this run's backend is openai/,
  );
  assert.throws(
    () => parseRolloutArgs([...base, "--vllm-url", "http://e:8000"]),
    /--vllm-url is for --backend vllm; this run's backend is gate/,
  );
});

Deno.test("applyPatchCommand: any patch text survives the heredoc or base64, git applies it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-unit-" });
  try {
    await Deno.writeTextFile(`${dir}/a.txt`, "one\n");
    assert.equal(
      (await sh("git init -q . && git add -A && git -c user.email=t@t commit -qm b", dir)).code,
      0,
    );
    const tricky = "one\nROLLGATE_PATCH_EOF\n'single' \"double\" $HOME `tick` \\back\\slash\n";
    await Deno.writeTextFile(`${dir}/a.txt`, tricky);
    const patch = (await sh("git diff", dir)).out;
    assert.equal((await sh("git checkout -q a.txt", dir)).code, 0);
    const cmd = applyPatchCommand(patch);
    assert.ok(cmd.includes("<<'ROLLGATE_PATCH_EOF'\n"));
    assert.ok(applyPatchCommand("x\nROLLGATE_PATCH_EOF\n").includes("<<'ROLLGATE_PATCH_EOF_'\n"));
    assert.ok(!/\brm\b/.test(cmd), "no rm (Codex refuses it)");
    const r = await sh(cmd, dir);
    assert.equal(r.code, 0, r.out);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), tricky);
    assert.match(r.out, /^ M a\.txt$/m, "git status is the tool's output");
    // Encoded, for a shell tool that refuses substitution syntax even inside a heredoc.
    assert.equal((await sh("git checkout -q a.txt", dir)).code, 0);
    const encoded = applyPatchCommand(patch, true);
    assert.ok(!/[`]|\$\(|<\(|>\(/.test(encoded), encoded);
    assert.ok(!/\brm\b/.test(encoded));
    const e = await sh(encoded, dir);
    assert.equal(e.code, 0, e.out);
    assert.equal(await Deno.readTextFile(`${dir}/a.txt`), tricky);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("wrongPatch: applies to every shipped task, empties a file the fix needs", async () => {
  for (const task of TASKS) {
    const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-unit-" });
    try {
      await baseRepo(task, dir);
      const patch = wrongPatch(task);
      await Deno.writeTextFile(`${dir}/../${task.instance_id}-wrong.patch`, patch);
      const r = await sh(`git apply ../${task.instance_id}-wrong.patch && git diff --stat`, dir);
      assert.equal(r.code, 0, `${task.instance_id}: ${r.out}\n${patch}`);
      const path = /^--- a\/(.+)$/m.exec(patch)![1];
      assert.equal(await Deno.readTextFile(`${dir}/${path}`), "", `${task.instance_id}: ${path}`);
      await Deno.remove(`${dir}/../${task.instance_id}-wrong.patch`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
  const bare = { ...TASKS[0], gold_patch: "", files: [] };
  assert.match(
    wrongPatch(bare),
    /^\+\+\+ b\/ROLLGATE_NOT_A_FIX\.txt$/m,
    "no file to break: a no-op",
  );
});

Deno.test("scripted replies: real Qwen3 ids that parse into the shell call / answer", async () => {
  const model = await sharedModel();
  const task = TASKS.find((t) => t.instance_id === "py-slug")!;
  const gold = scriptFor("gold", pi, task, model);
  const opening = await model.tokenizer.encode("<|im_start|>user\nFix it<|im_end|>\n");
  const first = await model.decode(await gold(opening));
  const call = /<tool_call>\n([\s\S]*)\n<\/tool_call><\|im_end\|>$/.exec(first)!;
  const parsed = JSON.parse(call[1]);
  assert.equal(parsed.name, "bash");
  assert.equal(parsed.arguments.command, applyPatchCommand(task.gold_patch));
  // Once the call's ids are in the prompt (its output came back), the final answer.
  const later = [...opening, ...await gold(opening), ...await model.tokenizer.encode("\n…")];
  const after = await model.decode(await gold(later));
  assert.ok(after.endsWith(`${FINAL_TEXT.applied}<|im_end|>`));
  const noop = await model.decode(await scriptFor("noop", pi, task, model)(opening));
  assert.ok(noop.endsWith(`${FINAL_TEXT.noop}<|im_end|>`));
  assert.ok(
    (await model.decode(await scriptFor("wrong", pi, task, model)(opening))).includes(
      JSON.stringify(applyPatchCommand(wrongPatch(task))).slice(1, 40),
    ),
  );
});

Deno.test("scripted replies in another family's format: DeepSeek V3.1 calls that parse", async () => {
  const model = await PolicyModel.load({
    dir: await deepSeekV31ModelDir(),
    family: "deepseek-v3.1",
  });
  const task = TASKS.find((t) => t.instance_id === "py-slug")!;
  const gold = scriptFor("gold", pi, task, model);
  const first = await gold([]);
  assert.match(
    await model.decode(first),
    /^<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bash<｜tool▁sep｜>/,
  );
  const { message } = await model.parse(first, () => "id");
  assert.equal(
    JSON.parse(message.tool_calls![0].arguments).command,
    applyPatchCommand(task.gold_patch),
  );
  const done = (await model.parse(await gold([7, ...first, 9]), () => "id")).message;
  assert.deepEqual(done, { role: "assistant", content: FINAL_TEXT.applied });
});

Deno.test("scripted replies without tools: one fenced action; the submit command reports", async () => {
  const model = await sharedModel();
  const task = TASKS.find((t) => t.instance_id === "py-slug")!;
  const gold = scriptFor("gold", miniSweAgent, task, model);
  const opening = await model.tokenizer.encode(
    "<|im_start|>user\nPlease solve this issue<|im_end|>\n<|im_start|>assistant\n",
  );
  // mini-swe-agent's action regex (mini_textbased.yaml), applied as it does: exactly one match.
  const actions = async (reply: number[]) =>
    [...(await model.decode(reply)).matchAll(/```mswea_bash_command\s*\n([\s\S]*?)\n```/g)]
      .map((m) => m[1].trim());
  const action = await gold(opening);
  assert.deepEqual(await actions(action), [applyPatchCommand(task.gold_patch).trim()]);
  const observed = [
    ...opening,
    ...action,
    ...await model.tokenizer.encode("\n<|im_start|>user\n<returncode>0</returncode><|im_end|>\n"),
  ];
  const [submit] = await actions(await gold(observed));
  // mini-swe-agent runs actions with /bin/sh; the first output line ends the run, the rest is the
  // submission.
  const out = await new Deno.Command("sh", { args: ["-c", submit], stdout: "piped" }).output();
  const [first, ...rest] = new TextDecoder().decode(out.stdout).split("\n");
  assert.equal(first, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT");
  assert.equal(rest.join("\n"), `${FINAL_TEXT.applied}\n`);
  const noop = await scriptFor("noop", miniSweAgent, task, model)(opening);
  assert.equal((await actions(noop)).length, 1);
  assert.ok((await model.decode(noop)).includes(FINAL_TEXT.noop));
});

function record(task: string, sample: number, extra: Partial<RolloutRecord> = {}): RolloutRecord {
  return {
    rollout_id: `r-${task}-${sample}`,
    task,
    sample,
    harness: "pi",
    reward: 1,
    tests: [],
    diff: "",
    agent: null,
    timings: { started_at: new Date(0).toISOString(), agent_ms: 1, eval_ms: 1, total_ms: 2_000 },
    samples: [],
    policy: "gold",
    sandbox: "local",
    turns: 2,
    eval: null,
    ...extra,
  };
}

Deno.test("results file: appends whole lines, ends a cut-off line, resume keys", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-unit-" });
  try {
    const path = `${dir}/sub/out.jsonl`;
    assert.equal((await readRecords(path)).size, 0, "a missing file has no records");
    const w = await ResultsWriter.open(path);
    await Promise.all([w.append(record("a", 0)), w.append(record("a", 1, { reward: 0 }))]);
    await w.close();
    await Deno.writeTextFile(path, '{"task":"b","sam', { append: true }); // a crash mid-line
    const w2 = await ResultsWriter.open(path);
    await w2.append(record("b", 0, { error: "sandbox failed" }));
    await w2.append(record("a", 0, { error: "a later failure does not hide the good record" }));
    await w2.close();
    const lines = (await Deno.readTextFile(path)).split("\n");
    assert.equal(lines.length, 6, "4 records + the cut line + the final newline");
    const recs = await readRecords(path);
    assert.equal(recs.size, 3);
    assert.equal(recs.get(recordKey("a", 0))!.error, undefined);
    assert.equal(recs.get(recordKey("a", 1))!.reward, 0);
    assert.equal(recs.get(recordKey("b", 0))!.error, "sandbox failed");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("summary: per task samples, errors, mean reward, pass@k; a total row", () => {
  const s = summarize(["a", "b", "c"], [
    record("a", 0),
    record("a", 1, { reward: 0 }),
    record("b", 0, { reward: 0 }),
    record("b", 1, { error: "boom", reward: 0 }),
    record("zzz", 0),
  ], 2);
  assert.deepEqual(s.ks, [1, 2]);
  assert.deepEqual(s.rows.map((r) => [r.task, r.samples, r.errors, r.meanReward, r.passAt]), [
    ["a", 2, 0, 0.5, { 1: 0.5, 2: 1 }],
    // One graded sample: pass@2 cannot be estimated from it.
    ["b", 2, 1, 0, { 1: 0, 2: null }],
    ["c", 0, 0, null, { 1: null, 2: null }],
  ]);
  assert.deepEqual([s.total.samples, s.total.errors, s.total.meanReward, s.total.passAt], [
    4,
    1,
    1 / 3,
    { 1: 0.25, 2: 1 },
  ]);
  const table = formatSummary(s);
  assert.equal(
    table,
    [
      "task  samples  errors  mean reward  pass@1  pass@2",
      "----  -------  ------  -----------  ------  ------",
      "a           2       0         0.50    0.50    1.00",
      "b           2       1         0.00    0.00       -",
      "c           0       0            -       -       -",
      "----  -------  ------  -----------  ------  ------",
      "all         4       1         0.33    0.25    1.00",
      "",
    ].join("\n"),
  );
});

/** pass@k by its definition: the share of k-subsets of the n samples holding a pass. */
function passAtKByCounting(n: number, c: number, k: number): number {
  const subsets = (from: number, left: number): [number, number] => {
    // [subsets, subsets with a pass] of `left` more items from items `from`…n-1 (the first c pass).
    if (left === 0) return [1, 0];
    if (n - from < left) return [0, 0];
    const [takeAll, takePass] = subsets(from + 1, left - 1);
    const [skipAll, skipPass] = subsets(from + 1, left);
    return [takeAll + skipAll, (from < c ? takeAll : takePass) + skipPass];
  };
  const [all, pass] = subsets(0, k);
  return pass / all;
}

Deno.test("pass@k: the unbiased estimator equals counting k-subsets; k up to the samples", () => {
  for (let n = 1; n <= 9; n++) {
    for (let c = 0; c <= n; c++) {
      for (let k = 1; k <= n; k++) {
        const got = passAtK(n, c, k)!;
        assert.ok(Math.abs(got - passAtKByCounting(n, c, k)) < 1e-12, `n=${n} c=${c} k=${k}`);
      }
      assert.ok(Math.abs(passAtK(n, c, 1)! - c / n) < 1e-12, "pass@1 is the pass rate");
      assert.equal(passAtK(n, c, n), c > 0 ? 1 : 0, "pass@n: any sample passed");
      assert.equal(passAtK(n, c, n + 1), null, "more than n: no estimate");
    }
  }
  assert.ok(Math.abs(passAtK(1000, 1, 10)! - 0.01) < 1e-12, "large n stays exact");
  assert.throws(() => passAtK(3, 4, 1), RangeError);
  assert.deepEqual(reportedKs(1), [1]);
  assert.deepEqual(reportedKs(4), [1, 2, 4]);
  assert.deepEqual(reportedKs(16), [1, 2, 5, 10, 16]);
  assert.deepEqual(reportedKs(100), [1, 2, 5, 10, 20, 50, 100]);
});

Deno.test("progress: a line per rollout, and the bar with elapsed time, rate and ETA", () => {
  let text = "";
  let now = 1_000;
  const p = new Progress(3, (t) => text += t, false, () => now);
  p.started();
  p.started();
  p.started();
  assert.match(p.bar(), /0\/3 done, 3 running, mean reward -; 0s elapsed$/, "no rate yet");
  now += 90_000;
  p.finished(record("a", 0));
  assert.equal(
    p.bar(),
    "[########................] 1/3 done, 2 running, mean reward 1.00; " +
      "1m30s elapsed, 0.7/min, ETA 3m00s",
  );
  now += 30_000;
  p.finished(record("b", 0, { error: "no sandbox" }));
  p.finished(undefined);
  p.end();
  assert.equal(
    text,
    "a#0 r-a-0: reward 1 [2.0 s] (1/3, 1m30s elapsed, 0.7/min, ETA 3m00s)\n" +
      "b#0 r-b-0: error: no sandbox [2.0 s] (2/3, 2m00s elapsed, 1.0/min, ETA 1m00s)\n" +
      "[################........] 2/3 done, 0 running, mean reward 1.00, 1 failed; " +
      "2m00s elapsed, 1.0/min, ETA 1m00s\n",
  );
  let tty = "";
  const q = new Progress(1, (t) => tty += t, true);
  q.started();
  assert.ok(tty.startsWith("\r\x1b[2K[........................] 0/1 done, 1 running"));
  assert.deepEqual([clockText(999), clockText(61_000), clockText(7_380_000)], [
    "1s",
    "1m01s",
    "2h03m",
  ]);
});
