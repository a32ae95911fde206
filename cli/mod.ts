/**
 * Every command-line verb: `serve` (the gateway), `rollout` (agents on tasks), `inspect` and
 * `audit` (a rollout's tree), `view` (the viewer over saved files), behind one dispatcher that
 * `main.ts` calls.
 *
 * @example
 * ```ts
 * import { runCommandLine } from "./mod.ts";
 *
 * const status = await runCommandLine(["--help"]); // prints the usage; 0
 * ```
 *
 * @module
 */
export { runCommandLine } from "./command_line.ts";
export { serve } from "./serve.ts";
export { parseRolloutArgs, ROLLOUT_USAGE, rolloutCommand } from "./rollout.ts";
export { inspect } from "./inspect.ts";
export { audit } from "./audit.ts";
export { view, VIEW_USAGE } from "./view.ts";
export { loadSource, type Source } from "./tree_source.ts";
export { COUNT, integerFlag, type IntegerKind, PORT, POSITIVE } from "./flags.ts";
export { UsageError } from "./usage_error.ts";
export { USAGE } from "./usage.ts";
