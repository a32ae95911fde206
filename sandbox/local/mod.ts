/**
 * The local sandbox backend (default): bubblewrap, network isolated, the gateway reachable only
 * through the rollout's Unix socket bridged to `127.0.0.1:8787` inside.
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
