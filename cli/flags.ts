/**
 * Reading numeric flag values, one way for every verb: absent or empty is `undefined`, anything
 * else must be an integer of the flag's kind or the verb stops with a {@link UsageError} that
 * names the flag.
 *
 * @example
 * ```ts
 * import { integerFlag, PORT, POSITIVE } from "./flags.ts";
 *
 * integerFlag("8", "--concurrency", POSITIVE); // 8
 * integerFlag(undefined, "--gateway-port", PORT); // undefined
 * ```
 *
 * @module
 */
import { UsageError } from "./usage_error.ts";

/** What integers a flag takes, and how the error says so. */
export interface IntegerKind {
  min: number;
  max: number;
  what: string;
}

export const POSITIVE: IntegerKind = { min: 1, max: Infinity, what: "a positive integer" };
export const COUNT: IntegerKind = { min: 0, max: Infinity, what: "an integer ≥ 0" };
export const PORT: IntegerKind = { min: 0, max: 65535, what: "a port number (0-65535)" };

/** `value` as an integer of `kind`; `undefined` when the flag was not given. */
export function integerFlag(
  value: string | undefined,
  flag: string,
  kind: IntegerKind,
): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (Number.isInteger(n) && n >= kind.min && n <= kind.max) return n;
  throw new UsageError(`${flag} must be ${kind.what}, got ${value}`);
}

/** The longest duration a flag may name: a timer past 2^31 - 1 ms would fire at once. */
export const MAX_SECONDS = 2_000_000;

/**
 * `value` as a duration in milliseconds (the flag is given in seconds, fractions allowed);
 * `undefined` when the flag was not given.
 *
 * @example
 * ```ts
 * import { secondsFlag } from "./flags.ts";
 *
 * secondsFlag("1.5", "--turn-timeout"); // 1500
 * ```
 */
export function secondsFlag(
  value: string | undefined,
  flag: string,
  max = MAX_SECONDS,
): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (Number.isFinite(n) && n > 0 && n <= max) return Math.round(n * 1000);
  throw new UsageError(
    `${flag} must be a number of seconds above 0 and at most ${max}, got ${value}`,
  );
}
