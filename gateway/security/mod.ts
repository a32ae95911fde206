/**
 * What keeps a gateway on a public address safe: the admin token required off loopback, compared
 * in constant time, and browsers of other sites refused.
 *
 * @module
 */
export { isLoopbackHost, requireTokenForPublicBind } from "./bind_address.ts";
export { browserGuard, jsonBodyRefusal } from "./browser_guard.ts";
export { sameToken } from "./token_compare.ts";
