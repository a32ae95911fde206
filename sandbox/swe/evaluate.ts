/**
 * Grades a patch for a task in a FRESH, offline sandbox: base repository → the model's patch →
 * the task's test files reset to the base state and the test patch applied (so a patch that edits
 * the tests cannot pass them) → every FAIL_TO_PASS and PASS_TO_PASS test, one command each.
 * Reward is 1 iff every one of them passes. The agent's sandbox never sees the tests or the reward.
 *
 * @example
 * ```ts
 * import { evaluatePatch, loadTasks } from "./mod.ts";
 * import { LocalProvider } from "../mod.ts";
 *
 * const [task] = await loadTasks("tasks/py-slug");
 * const report = await evaluatePatch(new LocalProvider(), task, task.gold_patch);
 * report.reward; // 1
 * ```
 *
 * @module
 */
import type { SandboxProvider } from "../sandbox.ts";
import { shellQuote } from "../shell.ts";
import { patchPaths } from "./diff.ts";
import type { SweTask } from "./task.ts";
import { testCommand } from "./test_command.ts";
import { prepareWorkspace } from "./workspace.ts";

/** Outcome of one test. */
export interface TestResult {
  id: string;
  kind: "FAIL_TO_PASS" | "PASS_TO_PASS";
  passed: boolean;
  exitCode: number;
  timedOut: boolean;
  durationMs: number;
  /** The end of the test's stdout + stderr. */
  output: string;
}

/** Outcome of grading one patch. */
export interface EvalReport {
  instance_id: string;
  /** 1 iff the patch applied and every FAIL_TO_PASS and PASS_TO_PASS test passed. */
  reward: 0 | 1;
  patch_applied: boolean;
  test_patch_applied: boolean;
  tests: TestResult[];
  /** Why grading stopped early (patch did not apply, sandbox failure). */
  error?: string;
  durationMs: number;
  /** Provider that ran the evaluation. */
  sandbox: string;
}

export interface EvalOptions {
  /** Image / template; default the task's `image`. */
  image?: string;
  /** Budget per test; default 60 s. */
  testTimeoutMs?: number;
  /** Extra environment of the evaluation commands. */
  env?: Record<string, string>;
}

const EVAL_DIR = "/tmp/rollgate-eval";
const OUTPUT_TAIL = 4_000;
const EXIT_MODEL_PATCH = 10;
const EXIT_TEST_PATCH = 11;

function applyScript(testPaths: string[]): string {
  const apply = "git apply --binary --whitespace=nowarn";
  const reset = testPaths.map((p) => {
    const q = shellQuote(p);
    return `if git cat-file -e HEAD:${q} 2>/dev/null; then git checkout -q HEAD -- ${q} || ` +
      `exit ${EXIT_TEST_PATCH}; else rm -rf -- ${q}; fi`;
  });
  return [
    `if [ -s ${EVAL_DIR}/model.patch ]; then ${apply} ${EVAL_DIR}/model.patch || exit ${EXIT_MODEL_PATCH}; fi`,
    ...reset,
    `${apply} ${EVAL_DIR}/test.patch || exit ${EXIT_TEST_PATCH}`,
  ].join("\n");
}

function tail(s: string): string {
  return s.length > OUTPUT_TAIL ? s.slice(-OUTPUT_TAIL) : s;
}

/** Grades `patch` (a diff against the task's base; `""` for no change) for `task`. */
export async function evaluatePatch(
  provider: SandboxProvider,
  task: SweTask,
  patch: string,
  opts: EvalOptions = {},
): Promise<EvalReport> {
  const started = performance.now();
  const ids = [
    ...task.FAIL_TO_PASS.map((id) => ({ id, kind: "FAIL_TO_PASS" as const })),
    ...task.PASS_TO_PASS.map((id) => ({ id, kind: "PASS_TO_PASS" as const })),
  ];
  const report: EvalReport = {
    instance_id: task.instance_id,
    reward: 0,
    patch_applied: false,
    test_patch_applied: false,
    tests: [],
    durationMs: 0,
    sandbox: provider.name,
  };
  const notRun = (why: string): TestResult[] =>
    ids.map(({ id, kind }) => ({
      id,
      kind,
      passed: false,
      exitCode: -1,
      timedOut: false,
      durationMs: 0,
      output: `not run: ${why}`,
    }));
  const env = { PYTHONDONTWRITEBYTECODE: "1", NO_COLOR: "1", ...opts.env };
  const sandbox = await provider.create({
    image: opts.image ?? task.image,
    network: "none",
    env,
    labels: { "rollgate.task": task.instance_id, "rollgate.purpose": "eval" },
  });
  try {
    await prepareWorkspace(sandbox, task);
    await sandbox.writeFile(`${EVAL_DIR}/model.patch`, patch);
    await sandbox.writeFile(`${EVAL_DIR}/test.patch`, task.test_patch);
    const applied = await sandbox.exec(applyScript(patchPaths(task.test_patch)), {
      timeoutMs: 60_000,
    });
    if (applied.exitCode === EXIT_MODEL_PATCH) {
      report.error = `the patch does not apply: ${applied.stderr.trim()}`;
      report.tests = notRun("the patch does not apply");
      return report;
    }
    report.patch_applied = true;
    if (applied.exitCode !== 0) {
      report.error =
        `the test patch does not apply (exit ${applied.exitCode}): ${applied.stderr.trim()}`;
      report.tests = notRun("the test patch does not apply");
      return report;
    }
    report.test_patch_applied = true;
    for (const { id, kind } of ids) {
      const test = testCommand(task, id);
      const t0 = performance.now();
      const r = await sandbox.exec(test.cmd, { timeoutMs: opts.testTimeoutMs ?? 60_000 });
      report.tests.push({
        id,
        kind,
        passed: test.passed(r),
        exitCode: r.exitCode,
        timedOut: r.timedOut,
        durationMs: Math.round(performance.now() - t0),
        output: tail(r.stdout + r.stderr),
      });
    }
    report.reward = report.tests.length > 0 && report.tests.every((t) => t.passed) ? 1 : 0;
    return report;
  } catch (err) {
    report.error = `evaluation failed: ${(err as Error).message}`;
    if (report.tests.length < ids.length) report.tests = notRun("evaluation failed");
    report.reward = 0;
    return report;
  } finally {
    await sandbox.kill();
    report.durationMs = Math.round(performance.now() - started);
  }
}
