/**
 * The SWE grader on the local sandbox, for every shipped task: the gold patch earns reward 1,
 * the empty patch and a wrong patch earn 0; a patch that rewrites the tests earns 0; a diff
 * captured from an agent's sandbox (new files included) grades like the patch it came from; the
 * agent's sandbox holds no hidden test. Also the loaders (task dirs, SWE-bench JSONL on a git
 * clone) and the per-runner pass rules.
 */
import assert from "node:assert/strict";
import {
  evaluatePatch,
  loadTasks,
  LocalProvider,
  patchPaths,
  runEpisode,
  shellQuote,
  SHIPPED_TASKS_DIR,
  type SweTask,
  TaskFormatError,
  testCommand,
} from "../../sandbox/mod.ts";
import { entries } from "./support/leaks.ts";
import { localSandboxMissing, skipGroup } from "../support/skips.ts";

const ignore = skipGroup("SWE grader", await localSandboxMissing());
const TASKS = await loadTasks(SHIPPED_TASKS_DIR);

/** A test's name as it appears in the test source (last dotted part for Python ids). */
function needle(task: SweTask, id: string): string {
  return task.runner === "python" ? id.slice(id.lastIndexOf(".") + 1) : id;
}

/** Shell that empties every file the gold patch touches: a plausible wrong fix. */
function wrongEdit(task: SweTask): string {
  return patchPaths(task.gold_patch).map((p) => `: > ${shellQuote(p)}`).join("; ");
}

Deno.test("tasks: at least five, Python and JavaScript, one needing a new file", () => {
  assert.ok(TASKS.length >= 5);
  assert.ok(TASKS.some((t) => t.runner === "python"));
  assert.ok(TASKS.some((t) => t.runner === "node"));
  assert.ok(TASKS.some((t) => /^new file mode/m.test(t.gold_patch)));
  for (const t of TASKS) {
    assert.ok(t.files.length > 0 && t.files.length < 20, `${t.instance_id}: < 20 files`);
    assert.ok(t.FAIL_TO_PASS.length > 0 && t.PASS_TO_PASS.length > 0, t.instance_id);
    for (const id of t.FAIL_TO_PASS) {
      const inBase = t.files.some((f) => new TextDecoder().decode(f.data).includes(needle(t, id)));
      assert.ok(!inBase, `${t.instance_id}: FAIL_TO_PASS test ${id} is absent from the base repo`);
    }
  }
});

Deno.test({ name: "grader: gold 1, empty 0, unappliable 0, for every task", ignore }, async () => {
  const tempDir = await Deno.makeTempDir({ prefix: "rollgate-test-" });
  const provider = new LocalProvider({ tempDir });
  await Promise.all(TASKS.map(async (task) => {
    const gold = await evaluatePatch(provider, task, task.gold_patch);
    assert.equal(gold.reward, 1, `${task.instance_id} gold: ${JSON.stringify(gold.tests)}`);
    assert.equal(gold.tests.length, task.FAIL_TO_PASS.length + task.PASS_TO_PASS.length);

    const empty = await evaluatePatch(provider, task, "");
    assert.equal(empty.reward, 0, `${task.instance_id} empty`);
    assert.ok(empty.patch_applied && empty.test_patch_applied);
    for (const t of empty.tests) {
      assert.equal(t.passed, t.kind === "PASS_TO_PASS", `${task.instance_id} empty: ${t.id}`);
    }

    const garbage = await evaluatePatch(provider, task, "diff --git a/x b/x\nnot a patch\n");
    assert.equal(garbage.reward, 0);
    assert.equal(garbage.patch_applied, false);
  }));
  assert.deepEqual(await entries(tempDir), []);
  await Deno.remove(tempDir);
});

Deno.test({ name: "episode: captured diffs grade like their patches", ignore }, async () => {
  const tempDir = await Deno.makeTempDir({ prefix: "rollgate-test-" });
  const provider = new LocalProvider({ tempDir });
  await Promise.all(TASKS.map(async (task) => {
    // An "agent" that applies the gold patch (new files included) and looks for hidden tests.
    const good = await runEpisode({
      provider,
      task,
      agent: async (sbx) => {
        const leak = await sbx.exec(
          `grep -rlF -- ${shellQuote(needle(task, task.FAIL_TO_PASS[0]))} .`,
        );
        await sbx.writeFile("/tmp/fix.patch", task.gold_patch);
        const applied = await sbx.exec("git apply /tmp/fix.patch && git commit -qam wip || true");
        return { leak: leak.stdout, applied: applied.exitCode };
      },
    });
    assert.equal(good.agent?.leak, "", `${task.instance_id}: hidden test visible to the agent`);
    assert.equal(good.report.reward, 1, `${task.instance_id}: ${JSON.stringify(good.report)}`);
    for (const path of patchPaths(task.gold_patch)) assert.ok(good.patch.includes(path));

    const wrong = await runEpisode({
      provider,
      task,
      agent: (sbx) => sbx.exec(wrongEdit(task)),
    });
    assert.notEqual(wrong.patch, "");
    assert.equal(wrong.report.reward, 0, `${task.instance_id} wrong`);

    const crashed = await runEpisode({
      provider,
      task,
      agent: () => Promise.reject(new Error("agent crashed")),
    });
    assert.equal(crashed.agentError, "agent crashed");
    assert.equal(crashed.patch, "");
    assert.equal(crashed.report.reward, 0);
  }));
  assert.deepEqual(await entries(tempDir), []);
  await Deno.remove(tempDir);
});

Deno.test(
  { name: "grader: a patch that rewrites the tests cannot pass them", ignore },
  async () => {
    const task = TASKS.find((t) => t.instance_id === "py-slug")!;
    const cheat = await runEpisode({
      provider: new LocalProvider(),
      task,
      agent: (sbx) =>
        sbx.writeFile(
          "tests/test_slug.py",
          "import unittest\nclass SlugTest(unittest.TestCase):\n" +
            [...task.FAIL_TO_PASS, ...task.PASS_TO_PASS]
              .map((id) => `    def ${needle(task, id)}(self): pass\n`).join(""),
        ),
    });
    assert.match(cheat.patch, /tests\/test_slug\.py/);
    assert.equal(cheat.report.reward, 0);
    assert.ok(cheat.report.test_patch_applied);
  },
);

Deno.test({ name: "grader: unknown test ids never pass", ignore }, async () => {
  const provider = new LocalProvider();
  for (const id of ["py-slug", "js-median"]) {
    const task = TASKS.find((t) => t.instance_id === id)!;
    const ghost = { ...task, FAIL_TO_PASS: [...task.FAIL_TO_PASS, "no such test"] };
    const r = await evaluatePatch(provider, ghost, task.gold_patch);
    assert.equal(r.reward, 0, id);
    assert.equal(r.tests.find((t) => t.id === "no such test")?.passed, false);
  }
});

Deno.test("test commands: runner rules", () => {
  const node = TASKS.find((t) => t.runner === "node")!;
  const cmd = testCommand(node, "a (b) c");
  assert.equal(cmd.cmd, "node --test --test-reporter=tap --test-name-pattern='^a \\(b\\) c$'");
  const res = (stdout: string, exitCode = 0) => ({ exitCode, stdout, stderr: "", timedOut: false });
  assert.equal(cmd.passed(res("ok 1 - a (b) c\n# pass 1\n# fail 0\n")), true);
  assert.equal(cmd.passed(res("ok 1 - a (b) c # SKIP test name does not match pattern\n")), false);
  assert.equal(cmd.passed(res("# pass 0\n# fail 0\n")), false, "no match exits 0 but fails");
  assert.equal(cmd.passed(res("not ok 1 - a (b) c\n", 1)), false);
  const py = TASKS.find((t) => t.runner === "python")!;
  const pc = testCommand(py, "tests.test_x.T.test_y");
  assert.equal(pc.cmd, "python3 -m unittest tests.test_x.T.test_y");
  const pres = (stderr: string, exitCode = 0) => ({
    exitCode,
    stdout: "",
    stderr,
    timedOut: false,
  });
  assert.equal(pc.passed(pres(".\n---\nRan 1 test in 0.001s\n\nOK\n")), true);
  assert.equal(pc.passed(pres("")), false, "exit 0 without unittest's summary");
  const custom = testCommand({ ...py, eval: { t1: "make check" } }, "t1");
  assert.equal(custom.cmd, "make check");
});

Deno.test("patchPaths: text, new, deleted and binary files", () => {
  const patch = [
    "diff --git a/src/a.js b/src/a.js",
    "--- a/src/a.js",
    "+++ b/src/a.js",
    "diff --git a/new.py b/new.py",
    "new file mode 100644",
    "--- /dev/null",
    "+++ b/new.py",
    "diff --git a/img.png b/img.png",
    "GIT binary patch",
  ].join("\n");
  assert.deepEqual(patchPaths(patch).sort(), ["img.png", "new.py", "src/a.js"]);
});

Deno.test({ name: "loader: SWE-bench JSONL on a git clone at base_commit", ignore }, async () => {
  const task = TASKS.find((t) => t.instance_id === "py-lru")!;
  const dir = await Deno.makeTempDir({ prefix: "rollgate-test-" });
  try {
    const repo = `${dir}/clone`;
    await Deno.mkdir(repo);
    for (const f of task.files) {
      const path = `${repo}/${f.path}`;
      await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
      await Deno.writeFile(path, f.data);
    }
    const git = (...args: string[]) =>
      new Deno.Command("git", {
        args: ["-c", "user.name=t", "-c", "user.email=t@t", "-C", repo, ...args],
        stdout: "piped",
        stderr: "null",
      }).output().then((o) => new TextDecoder().decode(o.stdout).trim());
    await git("init", "-q");
    await git("add", "-A");
    await git("commit", "-qm", "base");
    const base = await git("rev-parse", "HEAD");
    await Deno.writeTextFile(`${repo}/lru/cache.py`, "# later commit, not the base\n");
    await git("commit", "-qam", "later");
    const record = {
      instance_id: "py-lru-jsonl",
      repo: "example/lru",
      base_commit: base,
      problem_statement: task.problem_statement,
      FAIL_TO_PASS: JSON.stringify(task.FAIL_TO_PASS), // SWE-bench stores these as JSON strings
      PASS_TO_PASS: task.PASS_TO_PASS,
      patch: task.gold_patch,
      test_patch: task.test_patch,
      runner: "python",
      repo_path: "clone",
    };
    await Deno.writeTextFile(`${dir}/tasks.jsonl`, JSON.stringify(record) + "\n\n");
    const [loaded] = await loadTasks(`${dir}/tasks.jsonl`);
    assert.equal(loaded.base_commit, base);
    assert.deepEqual(loaded.FAIL_TO_PASS, task.FAIL_TO_PASS);
    assert.deepEqual(loaded.files.map((f) => f.path).sort(), task.files.map((f) => f.path).sort());
    assert.equal((await evaluatePatch(new LocalProvider(), loaded, loaded.gold_patch)).reward, 1);

    await Deno.writeTextFile(`${dir}/bad.jsonl`, JSON.stringify({ ...record, runner: "ruby" }));
    await assert.rejects(loadTasks(`${dir}/bad.jsonl`), TaskFormatError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
