/**
 * Reading flags, one way for every verb: {@link parseFlags} turns a flag the verb does not take
 * into a one-line {@link UsageError} that points at the verb's `--help`; numeric values absent or
 * empty are `undefined`, anything else must be an integer of the flag's kind or the verb stops
 * with a {@link UsageError} that names the flag.
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
import { parseArgs, type ParseArgsConfig } from "node:util";
import { UsageError } from "./usage_error.ts";

/**
 * `parseArgs` of `args` with `options` (positionals allowed when `positionals`); a mistake is a
 * {@link UsageError} ending in where the verb's flags are listed.
 *
 * @example
 * ```ts
 * import { parseFlags } from "./flags.ts";
 *
 * parseFlags("inspect", ["r1", "--json"], { json: { type: "boolean" } }, true);
 * // { values: { json: true }, positionals: ["r1"] }
 * ```
 */
export function parseFlags<O extends NonNullable<ParseArgsConfig["options"]>>(
  verb: string,
  args: readonly string[],
  options: O,
  positionals = false,
) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: positionals, strict: true });
  } catch (e) {
    // Node's text for an unknown flag goes on about positionals, with an unbalanced quote; some
    // of its messages span lines.
    const message = (e as Error).message.replace(/\. To specify a positional argument[^]*$/, "")
      .replace(/\s*\n\s*/g, " ");
    throw new UsageError(`${message} (main.ts ${verb} --help lists the flags)`);
  }
}

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
