/**
 * Token ids by text, bounded in bytes, least recently used dropped first.
 *
 * A text is kept the second time it is offered ({@link IdCache.offer}); the first time only its
 * fingerprint is ({@link SeenTexts}). What repeats (a harness's system prompt and tools, a task
 * sent to every rollout of a group, short headers) comes back within moments; a turn's own new
 * text (a tool output, the sampled answer) never does, since later turns render only their delta.
 * Kept on first sight, those filled the cache: ~24 MB of live heap for no hits, every entry
 * promoted to V8's old generation and collected there, which grows the heap V8 sizes from it.
 *
 * A bound in entries says nothing about memory: 4,096 entries are 4 MB of short segments or
 * hundreds of megabytes of tool outputs. The cost of an entry is estimated from what V8 holds
 * for it: the key (two bytes a character, the wider string form), the ids (a small-integer array
 * takes eight bytes an element on 64-bit V8) and a fixed overhead for the map entry and headers.
 *
 * @example
 * ```ts
 * import { IdCache } from "./id_cache.ts";
 *
 * const cache = new IdCache(1024 * 1024);
 * cache.offer("hello", [9707]);
 * cache.get("hello"); // undefined: seen once
 * cache.offer("hello", [9707]);
 * cache.get("hello"); // [9707]
 * cache.bytes > 0; // true
 * ```
 *
 * @module
 */

import { SeenTexts } from "./seen_texts.ts";

/** Map entry, array and string headers (an estimate; what matters is that it is not zero). */
const ENTRY_OVERHEAD = 96;

/** Texts remembered as seen once (4 bytes each): a text must come back within ~this many others. */
const SEEN_SLOTS = 65_536;

/** What an entry is counted as (see the module doc). */
export function idCacheEntryBytes(text: string, ids: readonly number[]): number {
  return ENTRY_OVERHEAD + 2 * text.length + 8 * ids.length;
}

export class IdCache {
  readonly #entries = new Map<string, number[]>();
  readonly #seen = new SeenTexts(SEEN_SLOTS);
  #bytes = 0;

  /** @param maxBytes the bound; an entry larger than it is not kept */
  constructor(readonly maxBytes: number) {}

  /** The estimated bytes held (see {@link idCacheEntryBytes}). */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The ids cached for `text`, now the most recently used; callers must not mutate them. */
  get(text: string): number[] | undefined {
    const hit = this.#entries.get(text);
    if (hit) {
      // Map iteration order is insertion order: re-inserting refreshes recency.
      this.#entries.delete(text);
      this.#entries.set(text, hit);
    }
    return hit;
  }

  /** Keeps `text`'s ids if it was offered before (see the module doc). */
  offer(text: string, ids: number[]): void {
    if (this.#seen.see(text)) this.set(text, ids);
  }

  /** Keeps `text`'s ids, seen before or not. */
  set(text: string, ids: number[]): void {
    const cost = idCacheEntryBytes(text, ids);
    if (cost > this.maxBytes) return;
    const old = this.#entries.get(text);
    if (old) {
      this.#entries.delete(text);
      this.#bytes -= idCacheEntryBytes(text, old);
    }
    this.#entries.set(text, ids);
    this.#bytes += cost;
    for (const [key, value] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(key);
      this.#bytes -= idCacheEntryBytes(key, value);
    }
  }
}
