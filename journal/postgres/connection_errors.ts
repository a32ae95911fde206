/**
 * Which database errors mean the connection broke or was refused (the server restarted, is
 * starting, or is gone), so that a write may be sent again and a caller may be told to retry.
 *
 * @module
 */

/** Errors of a broken or refused connection: the write may be sent again. */
export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? "";
  return /^(CONNECTION_|CONNECT_TIMEOUT|ECONN|EPIPE|ETIMEDOUT|57P0[1-3]|08)/.test(code) ||
    /connection|ECONNREFUSED|terminat/i.test((e as Error)?.message ?? "");
}
