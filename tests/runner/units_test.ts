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

Deno.test("applyPatchCommand: any patch text survives the heredoc, git applies it", async () => {
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
  ]);
  assert.deepEqual(s.rows.map((r) => [r.task, r.samples, r.errors, r.meanReward, r.passAtK]), [
    ["a", 2, 0, 0.5, 1],
    ["b", 2, 1, 0, 0],
    ["c", 0, 0, null, null],
  ]);
  assert.deepEqual([s.total.samples, s.total.errors, s.total.meanReward, s.total.passAtK], [
    4,
    1,
    1 / 3,
    0.5,
  ]);
  const table = formatSummary(s, 2);
  assert.equal(
    table,
    [
      "task  samples  errors  mean reward  pass@2",
      "----  -------  ------  -----------  ------",
      "a           2       0         0.50    1.00",
      "b           2       1         0.00    0.00",
      "c           0       0            -       -",
      "----  -------  ------  -----------  ------",
      "all         4       1         0.33    0.50",
      "",
    ].join("\n"),
  );
});

Deno.test("progress: a line per rollout, and the bar", () => {
  let text = "";
  const p = new Progress(3, (t) => text += t, false);
  p.started();
  p.started();
  p.started();
  p.finished(record("a", 0));
  assert.equal(p.bar(), "[########................] 1/3 done, 2 running, mean reward 1.00");
  p.finished(record("b", 0, { error: "no sandbox" }));
  p.finished(undefined);
  p.end();
  assert.equal(
    text,
    "a#0 r-a-0: reward 1 [2.0 s]\nb#0 r-b-0: error: no sandbox [2.0 s]\n" +
      "[################........] 2/3 done, 0 running, mean reward 1.00, 1 failed\n",
  );
  let tty = "";
  const q = new Progress(1, (t) => tty += t, true);
  q.started();
  assert.ok(tty.startsWith("\r\x1b[2K[........................] 0/1 done, 1 running"));
});
