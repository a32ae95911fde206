/**
 * A checksum per stored row (a sample, an event): CRC-32 of its JSON text and then its binary
 * arrays, written with the row and checked when it is read back. A flipped byte that still decodes
 * (a digit of an id, a mask bit) is then a damaged row, skipped or refused as such, never a
 * plausible sample handed to the trainer. Rows written before the checksum existed have none and
 * are read as they are.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { checkRow, rowSum } from "./row_checksum.ts";
 *
 * const sum = rowSum('{"reward":1}', new Uint8Array([1, 2, 3]));
 * checkRow('{"reward":1}', new Uint8Array([1, 2, 3]), sum); // fine
 * assert.throws(() => checkRow('{"reward":7}', new Uint8Array([1, 2, 3]), sum), /checksum/);
 * ```
 *
 * @module
 */
import { crc32 } from "node:zlib";

export function rowSum(data: string, arrays: Uint8Array | null): number {
  const text = crc32(data);
  return arrays ? crc32(arrays, text) : text;
}

/** Throws when the row's checksum (if it has one) does not match what was read. */
export function checkRow(data: string, arrays: Uint8Array | null, sum: number | null): void {
  if (sum === null || sum === undefined) return;
  const found = rowSum(data, arrays);
  if (found !== Number(sum)) {
    throw new Error(
      `the row fails its checksum (stored ${sum}, read ${found}): it changed after it was written`,
    );
  }
}
