/**
 * The content hash a journal stores a shared value under (`shared` table: values events repeat,
 * such as a turn's tools), made once per value object: a rollout's turns under one root pass the
 * same tools array (interned by its tree), and Claude Code's tools are ~48 kB of JSON, which
 * every turn would otherwise serialize and hash again. Values are not changed once journaled.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SharedValueHashes } from "./shared_values.ts";
 *
 * const hashes = new SharedValueHashes();
 * const tools = [{ name: "bash" }];
 * assert.equal(hashes.of(tools).hash, hashes.of([{ name: "bash" }]).hash);
 * assert.equal(hashes.of(tools).json, undefined); // made once; its JSON is not kept
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";

/** A value's hash, and its JSON when it was made now (to store it). */
export interface SharedValueHash {
  hash: string;
  json?: string;
}

export class SharedValueHashes {
  readonly #made = new WeakMap<object, string>();

  /**
   * `value`'s hash; with its JSON unless this object was hashed before (a caller that must store
   * a value it has no JSON for serializes it again).
   */
  of(value: unknown): SharedValueHash {
    const object = typeof value === "object" && value !== null ? value : null;
    const cached = object && this.#made.get(object);
    if (cached) return { hash: cached };
    const json = JSON.stringify(value);
    const hash = createHash("sha256").update(json).digest("base64url");
    if (object) this.#made.set(object, hash);
    return { hash, json };
  }
}
