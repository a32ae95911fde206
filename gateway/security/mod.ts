/**
 * What keeps a gateway on a public address safe: the admin token required off loopback, compared
 * in constant time, and browsers of other sites refused.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isLoopbackHost, jsonBodyRefusal, sameToken } from "./mod.ts";
 *
 * assert.ok(isLoopbackHost("127.0.0.1") && !isLoopbackHost("0.0.0.0"));
 * assert.ok(sameToken("s3cret-token", "s3cret-token") && !sameToken("s3cret-token", "guess"));
 * const form = new Request("http://127.0.0.1/api/rollouts", {
 *   method: "POST",
 *   headers: { "content-type": "application/x-www-form-urlencoded" },
 *   body: "a=1",
 * });
 * assert.match(jsonBodyRefusal(form) ?? "", /application\/json/);
 * ```
 *
 * @module
 */
export { isLoopbackHost, requireTokenForPublicBind } from "./bind_address.ts";
export { browserGuard, jsonBodyRefusal } from "./browser_guard.ts";
export { sameToken } from "./token_compare.ts";
