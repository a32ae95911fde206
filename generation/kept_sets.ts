/**
 * Kept-token sets (a sampler's `sampling_mask`): for each sampled id, the ids that survived
 * top-k/top-p and it was drawn from, as trainers that correct for truncated sampling need them.
 * They come as vLLM sends them (`choices[0].sampling_mask` of `/inference/v1/generate`: one list
 * of ids per output id) from an engine or a trainer's `complete`, are checked against the output
 * (one set per id, each holding the id sampled there) and kept in the token-row channel as int32
 * rows `[T, 1, K]` padded with {@link KEPT_ID_PAD} (`token_rows.ts`, field `sampling_mask`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keptSetRows, keptSetsOf } from "./kept_sets.ts";
 *
 * const rows = keptSetRows([[7, 8], [0]], [7, 0], 2);
 * assert.deepEqual(rows.shape, [2, 1, 2]);
 * assert.deepEqual(keptSetsOf(rows.bytes, 2), [[7, 8], [0]]);
 * ```
 *
 * @module
 */
import { type TokenRows, TokenRowsError } from "./token_rows.ts";

/** The pad of a kept-set row past its set's ids. */
export const KEPT_ID_PAD = -1;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * Kept sets checked against the sampled `ids` (one set per id, holding that id; ids are int32)
 * as int32 rows `[T, 1, K]`, `K` at least `width` (the request's `top_k`, 0 when none) and the
 * largest set. Throws {@link TokenRowsError} naming what is wrong.
 */
export function keptSetRows(sets: unknown, ids: readonly number[], width: number): TokenRows {
  if (!Array.isArray(sets) || sets.length !== ids.length) {
    throw new TokenRowsError(
      `sampling_mask must hold one set of kept ids per output id (${ids.length}), got ${
        Array.isArray(sets) ? sets.length : typeof sets
      }`,
    );
  }
  sets.forEach((set, i) => {
    if (!Array.isArray(set) || !set.every((t) => Number.isInteger(t) && t >= 0 && t < 2 ** 31)) {
      throw new TokenRowsError(`sampling_mask[${i}] must be a list of token ids`);
    }
    if (!set.includes(ids[i])) {
      throw new TokenRowsError(
        `sampling_mask[${i}] must hold the id sampled there (${
          ids[i]
        }): a kept set is what it was drawn from`,
      );
    }
  });
  let k = Math.max(width, 1);
  for (const set of sets as number[][]) k = Math.max(k, set.length);
  const values = new Int32Array(sets.length * k).fill(KEPT_ID_PAD);
  (sets as number[][]).forEach((set, i) => values.set(set, i * k));
  const bytes = new Uint8Array(values.buffer);
  if (!LITTLE_ENDIAN) {
    for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  }
  return { dtype: "int32", shape: [sets.length, 1, k], bytes };
}

/** Stored rows of width `width` back as one set per row (what `keptSetRows` was given). */
export function keptSetsOf(bytes: Uint8Array, width: number): number[][] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sets: number[][] = [];
  for (let at = 0; at + width * 4 <= bytes.byteLength; at += width * 4) {
    const set: number[] = [];
    for (let j = 0; j < width; j++) {
      const id = view.getInt32(at + j * 4, true);
      if (id !== KEPT_ID_PAD) set.push(id);
    }
    sets.push(set);
  }
  return sets;
}
