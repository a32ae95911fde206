import assert from "node:assert/strict";
import { IdCache, idCacheEntryBytes } from "./id_cache.ts";

Deno.test("IdCache: bounded in bytes, least recently used dropped first", () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i);
  const entry = idCacheEntryBytes("a", ids(10));
  const cache = new IdCache(3 * entry);
  for (const key of ["a", "b", "c"]) cache.set(key, ids(10));
  assert.equal(cache.bytes, 3 * entry);
  cache.get("a"); // now the most recent: "b" is the oldest
  cache.set("d", ids(10));
  assert.equal(cache.get("b"), undefined);
  assert.deepEqual([cache.get("a"), cache.get("c"), cache.get("d")], [ids(10), ids(10), ids(10)]);
  assert.equal(cache.bytes, 3 * entry);
  // One large entry pushes out as many as it needs.
  cache.set("e", ids(10 + 16));
  assert.equal(cache.size, 2);
  assert.ok(cache.bytes <= cache.maxBytes);
});

Deno.test("IdCache: an entry larger than the bound is not kept; replacing one recounts it", () => {
  const cache = new IdCache(1000);
  cache.set("huge", new Array(200).fill(1));
  assert.equal(cache.size, 0);
  assert.equal(cache.bytes, 0);
  cache.set("k", [1, 2, 3]);
  cache.set("k", [1]);
  assert.equal(cache.size, 1);
  assert.equal(cache.bytes, idCacheEntryBytes("k", [1]));
});

Deno.test("IdCache: an offered text is kept the second time, never the first", () => {
  const cache = new IdCache(1 << 20);
  for (let i = 0; i < 10_000; i++) cache.offer(`tool output ${i}`, [i]);
  assert.equal(cache.size, 0);
  assert.equal(cache.bytes, 0);
  cache.offer("tool output 7", [7]);
  assert.deepEqual(cache.get("tool output 7"), [7]);
  assert.equal(cache.get("tool output 8"), undefined);
  assert.equal(cache.bytes, idCacheEntryBytes("tool output 7", [7]));
});
