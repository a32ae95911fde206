/**
 * How one test id runs and what counts as a pass, for the zero-dependency runners:
 * - `python`: `python3 -m unittest <id>`; pass = exit 0 and unittest's own summary (`Ran N
 *   test(s)` with N ≥ 1, then `OK`), so an import that calls `sys.exit(0)` cannot pass;
 * - `node`: `node --test --test-reporter=tap --test-name-pattern='^<name>$'`; pass = the TAP
 *   stream reports `ok N - <name>` (not skipped) and no `not ok N - <name>`. The exit code is not
 *   used: a pattern matching nothing exits 0, and a test file that fails to load (e.g. it imports
 *   a module only the fix creates) fails the run even when the named test passed.
 * - an `eval` command given by the task: pass = exit 0.
 *
 * @module
 */
import type { ExecResult } from "../sandbox.ts";
import { shellQuote } from "../shell.ts";
import type { SweTask } from "./task.ts";

/** One runnable test. */
export interface TestCommand {
  cmd: string;
  passed(result: ExecResult): boolean;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The command and pass rule for `testId` of `task`. */
export function testCommand(task: SweTask, testId: string): TestCommand {
  const custom = task.eval[testId];
  if (custom) return { cmd: custom, passed: (r) => r.exitCode === 0 && !r.timedOut };
  if (task.runner === "python") {
    return {
      cmd: `python3 -m unittest ${shellQuote(testId)}`,
      passed: (r) =>
        r.exitCode === 0 && !r.timedOut && /^Ran [1-9]\d* tests? in /m.test(r.stderr) &&
        /^OK\b/m.test(r.stderr),
    };
  }
  if (task.runner === "node") {
    const pattern = `^${escapeRegExp(testId)}$`;
    const name = escapeRegExp(testId.replaceAll("\\", "\\\\").replaceAll("#", "\\#"));
    const ok = new RegExp(`^\\s*ok \\d+ - ${name}\\s*$`, "m");
    const notOk = new RegExp(`^\\s*not ok \\d+ - ${name}(\\s|$)`, "m");
    return {
      cmd: `node --test --test-reporter=tap --test-name-pattern=${shellQuote(pattern)}`,
      passed: (r) => !r.timedOut && ok.test(r.stdout) && !notOk.test(r.stdout),
    };
  }
  throw new Error(`${task.instance_id}: no way to run test ${testId}`);
}
