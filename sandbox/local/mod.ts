/**
 * The local sandbox backend (default): bubblewrap, network isolated, the gateway reachable only
 * through the rollout's Unix socket bridged to `127.0.0.1:8787` inside.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LOCAL_MOUNTS, LocalProvider } from "./mod.ts";
 *
 * // bubblewrap sandboxes on this machine: the task's workspace, the agents' installs, read-only.
 * const provider = new LocalProvider();
 * assert.equal(provider.name, "local");
 * assert.ok(Object.keys(LOCAL_MOUNTS).length > 0);
 * ```
 *
 * @module
 */
export {
  AGENTS_NODE_MODULES,
  AGENTS_VENV,
  LocalProvider,
  type LocalProviderOptions,
} from "./bwrap_provider.ts";
export { LOCAL_MOUNTS, LocalSandbox } from "./bwrap_sandbox.ts";
