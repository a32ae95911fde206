/**
 * A mistake on the command line (an unknown flag, a bad number): printed as one line with the
 * usage where it helps, never with a stack trace.
 *
 * @module
 */
export class UsageError extends Error {
  override name = "UsageError";
}
