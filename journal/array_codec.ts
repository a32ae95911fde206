/**
 * Number arrays in binary, several to one blob: each array in the narrowest type that holds its
 * values exactly (uint8 for masks, int32 for token ids, float64 otherwise), so ids cost 4 bytes
 * and logprobs round-trip bit for bit.
 *
 * Layout (little-endian): `u32 count`, then per array `u16 nameBytes`, name (UTF-8), `u8 width`
 * (1 = uint8, 4 = int32, 8 = float64), `u32 length`, the values.
 *
 * @example
 * ```ts
 * import { packArrays, unpackArrays } from "./array_codec.ts";
 *
 * const blob = packArrays({ output_ids: [9707, 151645], logprobs: [-0.25, -0.01] });
 * unpackArrays(blob).output_ids; // [9707, 151645]
 * ```
 *
 * @module
 */

type Width = 1 | 4 | 8;

function widthOf(values: ArrayLike<number>): Width {
  let width: Width = 1;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) return 8;
    if (v < 0 || v > 255) width = 4;
  }
  return width;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function packArrays(arrays: Readonly<Record<string, ArrayLike<number>>>): Uint8Array {
  const entries = Object.entries(arrays).map(([name, values]) => ({
    name: encoder.encode(name),
    values,
    width: widthOf(values),
  }));
  let size = 4;
  for (const e of entries) size += 2 + e.name.length + 1 + 4 + e.values.length * e.width;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, entries.length, true);
  let at = 4;
  for (const { name, values, width } of entries) {
    view.setUint16(at, name.length, true);
    out.set(name, at + 2);
    at += 2 + name.length;
    view.setUint8(at, width);
    view.setUint32(at + 1, values.length, true);
    at += 5;
    for (let i = 0; i < values.length; i++, at += width) {
      if (width === 1) out[at] = values[i];
      else if (width === 4) view.setInt32(at, values[i], true);
      else view.setFloat64(at, values[i], true);
    }
  }
  return out;
}

export function unpackArrays(blob: Uint8Array): Record<string, number[]> {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const count = view.getUint32(0, true);
  const out: Record<string, number[]> = {};
  let at = 4;
  for (let k = 0; k < count; k++) {
    const nameLength = view.getUint16(at, true);
    const name = decoder.decode(blob.subarray(at + 2, at + 2 + nameLength));
    at += 2 + nameLength;
    const width = view.getUint8(at) as Width;
    const length = view.getUint32(at + 1, true);
    at += 5;
    const values = new Array<number>(length);
    for (let i = 0; i < length; i++, at += width) {
      values[i] = width === 1
        ? blob[at]
        : width === 4
        ? view.getInt32(at, true)
        : view.getFloat64(at, true);
    }
    out[name] = values;
  }
  return out;
}
