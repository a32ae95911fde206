import assert from "node:assert/strict";
import { digestEnds, matchEnds } from "./prefix_digest.ts";

/** A body of `n` elements of random lengths, and where each ends. */
function body(n: number, seed: number): { bytes: Uint8Array; ends: Int32Array } {
  let s = seed;
  const next = () => (s = (s * 1103515245 + 12345) & 0x7fffffff);
  const parts: number[] = [0x5b];
  const ends: number[] = [];
  for (let k = 0; k < n; k++) {
    const len = 1 + next() % 300;
    for (let i = 0; i < len; i++) parts.push(0x61 + next() % 26);
    ends.push(parts.length);
    parts.push(0x2c);
  }
  parts.push(0x5d);
  return { bytes: Uint8Array.from(parts), ends: Int32Array.from(ends) };
}

/** The longest run of leading elements whose bytes are the same, by comparing bytes. */
function byBytes(a: Uint8Array, b: Uint8Array, ends: Int32Array): number {
  let j = 0;
  while (j < ends.length && ends[j] < b.length) {
    const n = ends[j];
    if (!a.subarray(0, n).every((x, i) => x === b[i])) break;
    j++;
  }
  return j;
}

Deno.test("prefix digest: the match is the byte comparison's, wherever the body departs", () => {
  for (const n of [1, 3, 4, 5, 40]) {
    const { bytes, ends } = body(n, n);
    const digests = digestEnds(bytes, ends, 0, n, new Uint8Array(0));
    // Every element changed in turn (one byte), and the body cut short at each end.
    for (let k = 0; k < n; k++) {
      const changed = bytes.slice();
      changed[ends[k] - 1] ^= 1;
      assert.equal(matchEnds(changed, ends, digests, n).count, k, `n ${n}: element ${k} changed`);
      assert.equal(byBytes(bytes, changed, ends), k);
      const cut = bytes.slice(0, ends[k] + 1);
      assert.equal(matchEnds(cut, ends, digests, n).count, k + 1, `n ${n}: cut after ${k}`);
    }
    // The same body extended by more elements: all of them.
    const longer = new Uint8Array(bytes.length + 10);
    longer.set(bytes);
    assert.equal(matchEnds(longer, ends, digests, n).count, n);
  }
});

Deno.test("prefix digest: the state of a match goes on to the new elements' digests as a fresh hash would", () => {
  const { bytes, ends } = body(12, 7);
  const old = digestEnds(bytes, ends, 0, 8, new Uint8Array(0));
  const match = matchEnds(bytes, ends, old, 8);
  assert.equal(match.count, 8);
  const went = digestEnds(bytes, ends, 8, 12, old, match.state);
  const fresh = digestEnds(bytes, ends, 0, 12, new Uint8Array(0));
  assert.deepEqual(went.subarray(0, 12 * 32), fresh.subarray(0, 12 * 32));
});
