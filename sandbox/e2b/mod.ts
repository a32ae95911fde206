/**
 * The E2B backend on the real `e2b` SDK: create, commands (exit codes normalized, explicit
 * timeouts, background handles), files, kill, and a preflight that turns every way the API can be
 * unusable into one clear error.
 *
 * @module
 */
export { E2BProvider, type E2BProviderOptions } from "./e2b_provider.ts";
