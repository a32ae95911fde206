/**
 * Picks a sandbox backend by name (the `--sandbox` option): `local` (bubblewrap, the default),
 * `docker` (Docker Engine API / Podman), `e2b`.
 *
 * @example
 * ```ts
 * import { createSandboxProvider } from "./mod.ts";
 * declare const flags: { sandbox?: string };
 *
 * const provider = createSandboxProvider(flags.sandbox ?? "local");
 * await provider.preflight(); // fail fast, with one clear message, before any rollout starts
 * ```
 *
 * @module
 */
import { DockerProvider, type DockerProviderOptions } from "./docker/mod.ts";
import { E2BProvider, type E2BProviderOptions } from "./e2b/mod.ts";
import { LocalProvider, type LocalProviderOptions } from "./local/mod.ts";
import type { SandboxProvider } from "./sandbox.ts";

/** Backend names. */
export const SANDBOX_PROVIDERS = ["local", "docker", "e2b"] as const;
export type SandboxProviderName = typeof SANDBOX_PROVIDERS[number];

/** Options per backend; only the chosen backend's are used. */
export interface SandboxProviderOptions {
  local?: LocalProviderOptions;
  docker?: DockerProviderOptions;
  e2b?: E2BProviderOptions;
}

/** The backend called `name`; throws for an unknown name, listing the known ones. */
export function createSandboxProvider(
  name: string,
  opts: SandboxProviderOptions = {},
): SandboxProvider {
  switch (name) {
    case "local":
      return new LocalProvider(opts.local);
    case "docker":
      return new DockerProvider(opts.docker);
    case "e2b":
      return new E2BProvider(opts.e2b);
    default:
      throw new Error(`unknown sandbox ${name}; known: ${SANDBOX_PROVIDERS.join(", ")}`);
  }
}
