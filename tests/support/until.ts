/**
 * Polls a condition until it holds, with a deadline: no timing is asserted, the deadline only
 * turns a hung test into a named failure.
 *
 * @example
 * ```ts
 * import { until } from "./until.ts";
 * let n = 0;
 * await until(() => ++n > 2, "three polls");
 * ```
 *
 * @module
 */

/** Resolves once `check` holds; throws naming `what` after `ms`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  ms = 20_000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
