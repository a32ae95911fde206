/**
 * Test helper: `node:assert/strict`, loaded at runtime.
 *
 * A static `import assert from "node:assert/strict"` fails `deno check`/`deno test` in this repo:
 * deno.json has `"nodeModulesDir": "manual"` and node_modules has no `@types/node`, so `node:*`
 * specifiers do not resolve for the type checker. A non-literal dynamic import is not
 * type-checked; the interface below types the subset the tests use. Replace this module with the
 * static import once `@types/node` is installed.
 *
 * @module
 */

/** The subset of `node:assert/strict` the tests in this folder use. */
export interface StrictAssert {
  ok(value: unknown, message?: string): asserts value;
  equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  notEqual(actual: unknown, expected: unknown, message?: string): void;
  deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  match(value: string, pattern: RegExp, message?: string): void;
  throws(fn: () => unknown, check: (err: unknown) => boolean, message?: string): void;
  rejects(
    promise: Promise<unknown>,
    check: (err: unknown) => boolean,
    message?: string,
  ): Promise<void>;
}

const NODE_ASSERT_STRICT: string = "node:assert/strict";

const assert: StrictAssert = (await import(NODE_ASSERT_STRICT)).default;
export default assert;
