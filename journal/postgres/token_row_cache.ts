/**
 * Token rows a replica holds in memory, so that samples (serialized synchronously) can read them:
 * those it wrote, and those a caller asked to hold before writing samples out. Bounded in bytes,
 * least recently used first out; rows held (pinned) are never dropped until released, so the
 * bound can be passed while samples larger than it are written out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TokenRowCache } from "./token_row_cache.ts";
 *
 * const cache = new TokenRowCache(4);
 * cache.put("a", new Uint8Array(3), true); // held
 * cache.put("b", new Uint8Array(3));
 * assert.equal(cache.get("b"), null); // past the bound, and "a" is held
 * cache.unpin("a");
 * assert.equal(cache.get("a")?.length, 3);
 * ```
 *
 * @module
 */

interface Entry {
  bytes: Uint8Array;
  pins: number;
}

export class TokenRowCache {
  /** In use order, least recent first. */
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): Uint8Array | null {
    const e = this.#entries.get(key);
    if (!e) return null;
    this.#entries.delete(key);
    this.#entries.set(key, e);
    return e.bytes;
  }

  /** Keeps `bytes` under `key` (held once more when `pin`). */
  put(key: string, bytes: Uint8Array, pin = false): void {
    const e = this.#entries.get(key);
    if (e) {
      this.#bytes += bytes.byteLength - e.bytes.byteLength;
      e.bytes = bytes;
      if (pin) e.pins++;
      this.get(key);
    } else {
      this.#entries.set(key, { bytes, pins: pin ? 1 : 0 });
      this.#bytes += bytes.byteLength;
    }
    this.#evict();
  }

  /** Holds the rows under `key` if they are here; false when they are not. */
  pin(key: string): boolean {
    const e = this.#entries.get(key);
    if (!e) return false;
    e.pins++;
    this.get(key);
    return true;
  }

  unpin(key: string): void {
    const e = this.#entries.get(key);
    if (e && e.pins > 0) e.pins--;
    this.#evict();
  }

  #evict(): void {
    if (this.#bytes <= this.maxBytes) return;
    for (const [key, e] of this.#entries) {
      if (this.#bytes <= this.maxBytes) return;
      if (e.pins > 0) continue;
      this.#entries.delete(key);
      this.#bytes -= e.bytes.byteLength;
    }
  }
}
