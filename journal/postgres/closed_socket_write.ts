/**
 * A guard for a known race in the `postgres` client (3.4.9): when the server closes a connection,
 * a write the client had deferred with `setImmediate` may still run and call `write` on the
 * socket it has already set to `null` (porsager/postgres#1154, #1208; fixes #1168, #1209 not
 * released). The `TypeError` is thrown from a timer, outside any query, so it would end the
 * process; the query it belonged to is failed by the client's own close handling, so dropping the
 * stray write loses nothing. Only that exact error is stopped; any other uncaught error still ends
 * the process.
 *
 * @module
 */

/** The stray write's error: a `TypeError` on `null`'s `write` thrown in the client's connection. */
export function isClosedSocketWrite(error: unknown): boolean {
  return error instanceof TypeError && /reading 'write'/.test(error.message) &&
    /postgres[\\/]src[\\/]connection\.js/.test(error.stack ?? "");
}

let installed = false;

/** Stops the stray write's error from ending the process (once per process; logs each one). */
export function guardClosedSocketWrites(log: (line: string) => void = console.error): void {
  if (installed) return;
  installed = true;
  globalThis.addEventListener("error", (event) => {
    if (!isClosedSocketWrite(event.error)) return;
    event.preventDefault();
    log("rollgate: dropped a write the postgres client deferred past its connection's close");
  });
}
