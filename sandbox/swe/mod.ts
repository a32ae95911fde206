/**
 * SWE-style tasks on any sandbox backend: loading (task directories or SWE-bench JSONL),
 * workspace preparation, diff capture, grading in a fresh sandbox, and the whole episode.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadTasks, patchPaths, SHIPPED_TASKS_DIR } from "./mod.ts";
 *
 * // `evaluatePatch(provider, task, task.gold_patch)` grades a patch in a sandbox (reward 1 here).
 * const tasks = await loadTasks(SHIPPED_TASKS_DIR);
 * assert.ok(tasks.length > 0);
 * for (const task of tasks) {
 *   assert.ok(patchPaths(task.gold_patch).length > 0, `${task.instance_id} has a gold patch`);
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
