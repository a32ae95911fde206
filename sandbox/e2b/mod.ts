/**
 * The E2B backend on the real `e2b` SDK: create, commands (exit codes normalized, explicit
 * timeouts, background handles), files, kill, and a preflight that turns every way the API can be
 * unusable into one clear error.
 *
 * @module
 */
export { DEFAULT_E2B_LIFETIME_MS, E2BProvider, type E2BProviderOptions } from "./e2b_provider.ts";
export { E2BSandbox } from "./e2b_sandbox.ts";
export {
  describeE2BError,
  E2B_FIX,
  e2bApiKey,
  e2bApiUrl,
  type E2BConnection,
} from "./e2b_errors.ts";
