/**
 * Harness plugins: one per agent CLI, looked up by name.
 *
 * A plugin is a {@link Harness}: protocol, pinned npm package and binary, shell tool, install
 * lines, config files (pure data, relative to `HOME`), environment, arguments, completion parsing
 * and the documented request quirks. Runners stay generic: `runLocal` (host subprocess) and
 * `sandboxLaunch` (files + env + one command for a sandbox; used by `runner/`).
 *
 * Adding a CLI is one new file plus one registry line: write `harness/<name>.ts` exporting a
 * `Harness` (copy `pi.ts` as a template; `mini_swe_agent.ts` for a PyPI-distributed, tool-less one)
 * and register it in {@link HARNESSES} below (the {@link HarnessName} type follows from it).
 * Nothing in `runner/`, `sandbox/` or `main.ts` changes; `--harness <name>` works at once. (If it
 * speaks a wire protocol the gateway does not serve yet, that protocol is a gateway change, not a
 * harness change.)
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { harness, HARNESSES, pi } from "./mod.ts";
 *
 * assert.equal(harness("pi"), pi);
 * assert.ok(Object.keys(HARNESSES).includes("codex"));
 * assert.throws(() => harness("nope"), /unknown harness nope/);
 * // `runLocal(harness("pi"), "List the files", launchOptions)` runs the CLI against a gateway.
 * ```
 *
 * @module
 */
import { claudeCode } from "./claude_code.ts";
import { codex } from "./codex.ts";
import { geminiCli } from "./gemini_cli.ts";
import type { Harness } from "./harness.ts";
import { miniSweAgent } from "./mini_swe_agent.ts";
import { opencode } from "./opencode.ts";
import { pi } from "./pi.ts";
import { qwenCode } from "./qwen_code.ts";

export { type Harness, type LaunchOptions, type ShellTool } from "./harness.ts";
export { claudeCode } from "./claude_code.ts";
export { codex } from "./codex.ts";
export { geminiCli } from "./gemini_cli.ts";
export { pi } from "./pi.ts";
export { miniSweAgent } from "./mini_swe_agent.ts";
export {
  opencode,
  OPENCODE_CONFIG_DIR_REL,
  opencodeConfig,
  opencodePluginStub,
} from "./opencode.ts";
export { qwenCode } from "./qwen_code.ts";
export {
  agentInstallHint,
  binaryInstalled,
  describeRun,
  runLocal,
  type RunResult,
  tail,
} from "./run_local.ts";
export { CLI_MISSING_EXIT_CODE, CLI_MISSING_MARKER, sandboxLaunch, shellWord } from "./launch.ts";

/** Every harness, by name. */
export const HARNESSES = {
  "claude-code": claudeCode,
  codex,
  pi,
  opencode,
  "qwen-code": qwenCode,
  "mini-swe-agent": miniSweAgent,
  "gemini-cli": geminiCli,
} as const satisfies Readonly<Record<string, Harness>>;

/** The agent CLIs rollgate knows: the registry's keys. */
type HarnessName = keyof typeof HARNESSES;

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
