/**
 * Every command-line verb: `serve` (the gateway), `rollout` (agents on tasks), `inspect` and
 * `audit` (a rollout's tree), `view` (the viewer over saved files), `agent` (one agent CLI run
 * against an existing rollout), behind one dispatcher that `main.ts` calls. The dispatcher loads a verb's module only when it is named, so this surface
 * re-exports none of them: importing it must not load the whole program (tests import a verb's
 * file directly).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runCommandLine } from "./mod.ts";
 *
 * assert.equal(await runCommandLine(["--help"]), 0); // prints the usage
 * ```
 *
 * @module
 */
export { runCommandLine } from "./command_line.ts";
