/**
 * Which listen addresses are private to this machine, and the rule that an address reachable from
 * elsewhere needs the admin token: without it, anyone who can reach the port can create rollouts,
 * pause the gateway and read every sample.
 *
 * @module
 */

/** Shortest admin token accepted on a public address (a hex token of 8 bytes). */
export const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * True for a hostname or address that only this machine can reach: `localhost` (and
 * `*.localhost`), 127.0.0.0/8, `::1`.
 *
 * @example
 * ```ts
 * isLoopbackHost("127.0.0.1"); // true
 * isLoopbackHost("[::1]"); // true
 * isLoopbackHost("0.0.0.0"); // false
 * ```
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  if (h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m !== null && m.slice(1).every((o) => Number(o) <= 255);
}

/** Why the gateway must not listen on an address. */
export class UnsafeBindError extends Error {
  override name = "UnsafeBindError";
}

/**
 * Throws an `UnsafeBindError` when `hostname` is reachable from other machines and no admin token
 * (or one too short to resist guessing) is configured.
 *
 * @example
 * ```ts
 * requireTokenForPublicBind("127.0.0.1", undefined); // fine: loopback needs no token
 * requireTokenForPublicBind("0.0.0.0", "4f9c2a7d1e6b8c3a5f0e9d2b7c4a1f6e"); // fine
 * ```
 */
export function requireTokenForPublicBind(hostname: string, adminToken: string | undefined): void {
  if (isLoopbackHost(hostname)) return;
  if (!adminToken) {
    throw new UnsafeBindError(
      `refusing to listen on ${hostname} without ROLLGATE_ADMIN_TOKEN: anyone who can reach ` +
        `this address could create rollouts, pause the gateway and read every sample. Set ` +
        `ROLLGATE_ADMIN_TOKEN to a long random secret (e.g. \`openssl rand -hex 32\`), or listen ` +
        `on 127.0.0.1.`,
    );
  }
  if (adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new UnsafeBindError(
      `refusing to listen on ${hostname}: ROLLGATE_ADMIN_TOKEN has ${adminToken.length} ` +
        `characters, fewer than ${MIN_ADMIN_TOKEN_LENGTH}; use a long random secret ` +
        `(e.g. \`openssl rand -hex 32\`).`,
    );
  }
}
