/**
 * A deadline for a test's steps: a hang becomes a named failure within `ms` instead of a stalled
 * suite, and `context()` (e.g. what a fake server saw last) says where it stopped.
 *
 * @example
 * ```ts
 * import { within } from "./within.ts";
 * const answer = await within("the answer", 1_000, Promise.resolve(42), () => "nothing pending");
 * ```
 *
 * @module
 */

/** Awaits `work`; rejects naming `label` (and `context()`) if it takes longer than `ms`. */
export async function within<T>(
  label: string,
  ms: number,
  work: Promise<T>,
  context: () => string = () => "",
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) =>
    timer = setTimeout(() => {
      const where = context();
      reject(new Error(`${label}: no result within ${ms} ms${where ? `; ${where}` : ""}`));
    }, ms)
  );
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
