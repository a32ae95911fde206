/**
 * The E2B backend on the real `e2b` SDK: create, commands (exit codes normalized, explicit
 * timeouts, background handles), files, kill, and a preflight that turns every way the API can be
 * unusable into one clear error.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { E2BProvider } from "./mod.ts";
 *
 * // Sandboxes in E2B's cloud; `preflight` says what is missing before any rollout starts.
 * const provider = new E2BProvider({ apiKey: "" });
 * assert.equal(provider.name, "e2b");
 * ```
 *
 * @module
 */
export { E2BProvider, type E2BProviderOptions } from "./e2b_provider.ts";
