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
 * import { createSandboxProvider, evaluatePatch, loadTasks, SHIPPED_TASKS_DIR } from "./mod.ts";
 *
 * const provider = createSandboxProvider("local");
 * await provider.preflight();
 * const [task] = await loadTasks(`${SHIPPED_TASKS_DIR}/py-slug`);
 * (await evaluatePatch(provider, task, task.gold_patch)).reward; // 1
 * ```
 *
 * @module
 */
export * from "./sandbox.ts";
export { parentDir, resolveInside, shellQuote, toBase64 } from "./shell.ts";
export {
  createSandboxProvider,
  SANDBOX_PROVIDERS,
  type SandboxProviderName,
  type SandboxProviderOptions,
} from "./provider.ts";
export * from "./gateway_bridge/mod.ts";
export * from "./local/mod.ts";
export * from "./docker/mod.ts";
export * from "./e2b/mod.ts";
export * from "./swe/mod.ts";
