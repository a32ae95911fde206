/**
 * Harness plugins: one per agent CLI, looked up by name.
 *
 * @example
 * ```ts
 * import { harness, runLocal } from "./harness/mod.ts";
 * const run = await runLocal(harness("pi"), "List the files", launchOptions);
 * ```
 *
 * @module
 */
import { claudeCode } from "./claude_code.ts";
import { codex } from "./codex.ts";
import type { Harness, HarnessName } from "./harness.ts";
import { pi } from "./pi.ts";

export * from "./harness.ts";
export { claudeCode, modelCapabilities } from "./claude_code.ts";
export { codex, CODEX_TOKEN_ENV, codexConfig, codexHome } from "./codex.ts";
export { pi, PI_PROVIDER, PI_TOKEN_ENV, piAgentDir, piModels, piSettings } from "./pi.ts";
export * from "./run_local.ts";

/** Every harness, by name. */
export const HARNESSES: Readonly<Record<HarnessName, Harness>> = {
  "claude-code": claudeCode,
  codex,
  pi,
};

/** Whether `name` names a known harness. */
export function isHarnessName(name: string): name is HarnessName {
  return Object.hasOwn(HARNESSES, name);
}

/** The harness called `name`; throws for an unknown name, listing the known ones. */
export function harness(name: string): Harness {
  if (!isHarnessName(name)) {
    throw new Error(`unknown harness ${name}; known: ${Object.keys(HARNESSES).join(", ")}`);
  }
  return HARNESSES[name];
}
