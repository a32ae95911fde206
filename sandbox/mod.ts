/**
 * Sandboxes for agent rollouts and grading: the {@link Sandbox} contract, three backends (local
 * bubblewrap — the default, Docker Engine API / Podman, E2B), and the SWE task runner and grader.
 *
 * - `sandbox.ts`: the interface (`SandboxProvider`, `Sandbox`, `ExecOpts`, `ExecResult`, `Proc`).
 * - `gateway_bridge/`: the rollout's gateway socket and the in-sandbox forwarder (local, docker).
 * - `local/`: bubblewrap, offline except the rollout's gateway socket.
 * - `docker/`: Engine API v1.41 over a Unix socket, no npm package.
 * - `e2b/`: the `e2b` SDK, with a preflight that explains every connection failure.
 * - `swe/`: tasks (`tasks/`, SWE-bench JSONL), workspaces, diffs, grading, episodes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { loadTasks, patchPaths, SHIPPED_TASKS_DIR, shellQuote } from "./mod.ts";
 *
 * // `createSandboxProvider("local" | "docker" | "e2b")` gives a provider whose sandboxes run a
 * // task's tests: `evaluatePatch(provider, task, task.gold_patch)` rewards the gold patch with 1.
 * const [task] = await loadTasks(`${SHIPPED_TASKS_DIR}/py-slug`);
 * assert.equal(task.instance_id, "py-slug");
 * assert.ok(patchPaths(task.gold_patch).length > 0);
 * assert.equal(shellQuote("it's"), `'it'\\''s'`);
 * ```
 *
 * @module
 */
export {
  type GatewayAccess,
  type Proc,
  type Sandbox,
  SandboxError,
  type SandboxProvider,
  TIMEOUT_EXIT_CODE,
} from "./sandbox.ts";
export { shellQuote, toBase64 } from "./shell.ts";
export { createSandboxProvider, type SandboxProviderOptions } from "./provider.ts";
export { rolloutSocketHandler, serveRolloutSocket } from "./gateway_bridge/mod.ts";
export {
  AGENTS_NODE_MODULES,
  AGENTS_VENV,
  LOCAL_MOUNTS,
  LocalProvider,
  LocalSandbox,
} from "./local/mod.ts";
export {
  demuxRawStream,
  DockerApiError,
  DockerEngine,
  DockerProvider,
  findDockerSocket,
  rawFrame,
  tarOneFile,
  untarFirstFile,
} from "./docker/mod.ts";
export { E2BProvider } from "./e2b/mod.ts";
export {
  type EpisodeResult,
  evaluatePatch,
  loadTasks,
  patchPaths,
  runEpisode,
  SHIPPED_TASKS_DIR,
  type SweTask,
  TaskFormatError,
  testCommand,
} from "./swe/mod.ts";
