/**
 * What keeps a gateway on a public address safe: the admin token required off loopback, compared
 * in constant time, and browsers of other sites refused.
 *
 * @module
 */
export {
  isLoopbackHost,
  MIN_ADMIN_TOKEN_LENGTH,
  requireTokenForPublicBind,
  UnsafeBindError,
} from "./bind_address.ts";
export {
  browserGuard,
  type BrowserGuardOptions,
  browserRefusal,
  jsonBodyRefusal,
} from "./browser_guard.ts";
export { sameToken } from "./token_compare.ts";
