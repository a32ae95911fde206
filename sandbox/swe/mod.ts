/**
 * SWE-style tasks on any sandbox backend: loading (task directories or SWE-bench JSONL),
 * workspace preparation, diff capture, grading in a fresh sandbox, and the whole episode.
 *
 * @example
 * ```ts
 * import { evaluatePatch, loadTasks, SHIPPED_TASKS_DIR } from "./mod.ts";
 * import type { SandboxProvider } from "../mod.ts";
 * declare const provider: SandboxProvider;
 *
 * for (const task of await loadTasks(SHIPPED_TASKS_DIR)) {
 *   const report = await evaluatePatch(provider, task, task.gold_patch); // reward 1
 * }
 * ```
 *
 * @module
 */
export { captureDiff, patchPaths } from "./diff.ts";
export { type EpisodeOptions, type EpisodeResult, runEpisode } from "./episode.ts";
export { type EvalOptions, type EvalReport, evaluatePatch, type TestResult } from "./evaluate.ts";
export { loadTaskDir, loadTasks, loadTasksJsonl, SHIPPED_TASKS_DIR } from "./load_tasks.ts";
export { isGitRepo, readDirFiles, readGitFiles } from "./repo_files.ts";
export {
  parseTaskRecord,
  type RepoFile,
  type SweTask,
  TaskFormatError,
  type TestRunner,
} from "./task.ts";
export { type TestCommand, testCommand } from "./test_command.ts";
export { prepareWorkspace, type Workspace } from "./workspace.ts";
