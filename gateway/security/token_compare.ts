/**
 * Comparing a presented credential with a secret without leaking, through timing, how much of it
 * matched. Both sides are hashed first, so the comparison always runs over 32 bytes whatever the
 * lengths, and the secret's length is not revealed either.
 *
 * @module
 */
import { createHash, timingSafeEqual } from "node:crypto";

function digest(s: string): Uint8Array {
  return createHash("sha256").update(s, "utf8").digest();
}

/**
 * True when `presented` equals `secret`, compared in constant time.
 *
 * @example
 * ```ts
 * sameToken("rg_admin_0123456789", "rg_admin_0123456789"); // true
 * sameToken("rg_admin_0123456780", "rg_admin_0123456789"); // false
 * sameToken(null, "rg_admin_0123456789"); // false
 * ```
 */
export function sameToken(presented: string | null | undefined, secret: string): boolean {
  // Hash even when nothing was presented, so a missing credential costs the same time.
  const equal = timingSafeEqual(digest(presented ?? ""), digest(secret));
  return equal && presented !== null && presented !== undefined;
}
