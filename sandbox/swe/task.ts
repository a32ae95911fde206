/**
 * SWE-style tasks: SWE-bench field names (`instance_id`, `repo`, `base_commit`,
 * `problem_statement`, `FAIL_TO_PASS`, `PASS_TO_PASS`, `test_patch`, `patch`/`gold_patch`,
 * `image`) plus how to run one test (`runner`, or an `eval` command per test id).
 *
 * A loaded {@link SweTask} carries everything needed to grade it on any backend: the base
 * repository's files (in memory; tasks are tiny), the test patch and the gold patch as text.
 *
 * @module
 */

/** Zero-dependency test runners. */
export type TestRunner = "python" | "node";

/** One file of the base repository. */
export interface RepoFile {
  /** Path relative to the repository root, `/`-separated. */
  path: string;
  data: Uint8Array;
  /** Executable bit set. */
  executable: boolean;
}

/** A task ready to run and grade. */
export interface SweTask {
  instance_id: string;
  /** Repository name (informational). */
  repo: string;
  /** Commit the files came from (`"HEAD"` for a plain directory). */
  base_commit: string;
  problem_statement: string;
  hints_text: string;
  /** Tests the fix must make pass. */
  FAIL_TO_PASS: string[];
  /** Tests that pass before and must still pass. */
  PASS_TO_PASS: string[];
  /** Image / template for Docker and E2B; `"local"` for the bubblewrap backend. */
  image: string;
  runner?: TestRunner;
  /** A shell command per test id (overrides `runner` for that id); exit 0 = pass. */
  eval: Record<string, string>;
  /** Diff adding the FAIL_TO_PASS tests (applied only when grading). */
  test_patch: string;
  /** Reference fix (gold → reward 1 is the grader's self-test). */
  gold_patch: string;
  /** The base repository: bug present, new tests absent. */
  files: RepoFile[];
}

/** A malformed task record. */
export class TaskFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TaskFormatError";
  }
}

function stringList(rec: Record<string, unknown>, key: string, where: string): string[] {
  let v = rec[key];
  // SWE-bench exports store these lists as JSON strings.
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      throw new TaskFormatError(`${where}: ${key} is a string but not a JSON list`);
    }
  }
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
    throw new TaskFormatError(`${where}: ${key} must be a list of strings`);
  }
  return v;
}

function str(rec: Record<string, unknown>, key: string, where: string, fallback?: string): string {
  const v = rec[key];
  if (typeof v === "string") return v;
  if (v === undefined && fallback !== undefined) return fallback;
  throw new TaskFormatError(`${where}: ${key} must be a string`);
}

/** The checked metadata of a record; patches and files are filled in by the loader. */
export function parseTaskRecord(
  rec: unknown,
  where: string,
): Omit<SweTask, "test_patch" | "gold_patch" | "files"> {
  if (!rec || typeof rec !== "object" || Array.isArray(rec)) {
    throw new TaskFormatError(`${where}: a task must be a JSON object`);
  }
  const r = rec as Record<string, unknown>;
  const id = str(r, "instance_id", where);
  if (!/^[A-Za-z0-9._-]+$/.test(id)) {
    throw new TaskFormatError(`${where}: instance_id must match [A-Za-z0-9._-]+`);
  }
  const runner = r.runner;
  if (runner !== undefined && runner !== "python" && runner !== "node") {
    throw new TaskFormatError(`${where}: runner must be "python" or "node"`);
  }
  const evalCmds = r.eval ?? {};
  if (
    typeof evalCmds !== "object" || evalCmds === null || Array.isArray(evalCmds) ||
    !Object.values(evalCmds).every((c) => typeof c === "string")
  ) {
    throw new TaskFormatError(`${where}: eval must map test ids to shell commands`);
  }
  const task = {
    instance_id: id,
    repo: str(r, "repo", where, id),
    base_commit: str(r, "base_commit", where, "HEAD"),
    problem_statement: str(r, "problem_statement", where),
    hints_text: str(r, "hints_text", where, ""),
    FAIL_TO_PASS: stringList(r, "FAIL_TO_PASS", where),
    PASS_TO_PASS: stringList(r, "PASS_TO_PASS", where),
    image: str(r, "image", where, "local"),
    runner: runner as TestRunner | undefined,
    eval: evalCmds as Record<string, string>,
  };
  for (const test of [...task.FAIL_TO_PASS, ...task.PASS_TO_PASS]) {
    if (!task.eval[test] && !task.runner) {
      throw new TaskFormatError(
        `${where}: test ${test} has no eval command and there is no runner`,
      );
    }
  }
  return task;
}
