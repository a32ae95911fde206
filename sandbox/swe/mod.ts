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
export { patchPaths } from "./diff.ts";
export { type EpisodeResult, runEpisode } from "./episode.ts";
export { evaluatePatch } from "./evaluate.ts";
export { loadTasks, SHIPPED_TASKS_DIR } from "./load_tasks.ts";
export { type SweTask, TaskFormatError } from "./task.ts";
export { testCommand } from "./test_command.ts";
