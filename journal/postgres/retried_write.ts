/**
 * A write to the database sent again while the connection is what failed (the server restarted,
 * is starting, went away), up to the retry time: every write lands once (its `uid`), so a resend
 * after a lost answer does no harm. With `attemptMs` each attempt has an end of its own: a
 * statement that never returns (a connection that went silent) is given up and sent again instead
 * of holding `flushed()` and every later write of the replica. Only for writes that land once
 * even when two attempts overlap (an event batch: `ON CONFLICT (uid) DO NOTHING` waits for the
 * other attempt's rows).
 *
 * @module
 */
import { isConnectionError } from "./connection_errors.ts";

/** A write attempt that did not answer in time (sent again, as after a lost connection). */
class AttemptTimeout extends Error {
  override name = "AttemptTimeout";
  constructor(ms: number) {
    super(`a write to the database did not answer within ${ms / 1000} s`);
  }
}

export async function retried<T>(
  write: () => Promise<T>,
  retryMs: number,
  attemptMs = Infinity,
): Promise<T> {
  const deadline = Date.now() + retryMs;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const attempt = write();
      if (attemptMs === Infinity) return await attempt;
      attempt.catch(() => {}); // given up on: its late failure is nobody's
      return await Promise.race([
        attempt,
        new Promise<never>((_, reject) =>
          timer = setTimeout(() => reject(new AttemptTimeout(attemptMs)), attemptMs)
        ),
      ]);
    } catch (e) {
      const again = isConnectionError(e) || e instanceof AttemptTimeout;
      if (!again || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      clearTimeout(timer);
    }
  }
}
