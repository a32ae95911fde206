/**
 * NumPy's `.npy` format, read (what vLLM sends MoE routing in: `np.save` of a
 * `(T, layers, top_k)` array, base64 in `routed_experts`). Pure: bytes in, rows out.
 *
 * Layout (numpy `lib/format.py`): the magic `\x93NUMPY`, a major and minor version byte, the
 * header length (little-endian uint16 in version 1.0, uint32 in 2.0 and 3.0), then the header:
 * a Python dict literal `{'descr': '<u2', 'fortran_order': False, 'shape': (5, 2, 8), }` padded
 * with spaces and ended by a newline; the values follow in C order. Only the dtypes token rows
 * keep are read (uint8, uint16, int32, either byte order; kept little-endian).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { decodeNpy, encodeNpy } from "./npy.ts";
 *
 * const bytes = encodeNpy("uint8", [2, 1, 2], Uint8Array.of(1, 2, 3, 4));
 * const rows = decodeNpy(bytes);
 * assert.deepEqual(rows.shape, [2, 1, 2]);
 * assert.deepEqual([...rows.bytes], [1, 2, 3, 4]);
 * ```
 *
 * @module
 */
import { DTYPE_BYTES, type RowDtype, type TokenRows } from "./token_rows.ts";

/** A `.npy` that is not one, or not of a dtype and layout token rows keep; the message says. */
export class NpyError extends Error {
  override name = "NpyError";
}

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/** `descr` kinds read here, by their type code without the byte-order mark. */
const KINDS: Record<string, RowDtype> = { u1: "uint8", u2: "uint16", i4: "int32" };

/** The values of a `.npy` file, in little-endian order. Throws {@link NpyError}. */
export function decodeNpy(bytes: Uint8Array): TokenRows {
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b)) {
    throw new NpyError("not a .npy array (no \\x93NUMPY magic)");
  }
  const major = bytes[6];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let headerLength: number, at: number;
  if (major === 1) [headerLength, at] = [view.getUint16(8, true), 10];
  else if (major === 2 || major === 3) {
    if (bytes.length < 12) throw new NpyError("a .npy header cut short");
    [headerLength, at] = [view.getUint32(8, true), 12];
  } else throw new NpyError(`.npy format version ${major}.${bytes[7]} is not known here`);
  if (at + headerLength > bytes.length) throw new NpyError("a .npy header cut short");
  const header = new TextDecoder(major === 3 ? "utf-8" : "latin1").decode(
    bytes.subarray(at, at + headerLength),
  );
  const descr = /'descr'\s*:\s*'([<>|=]?)([a-z]\d+)'/.exec(header);
  const order = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shapeText) {
    throw new NpyError(`a .npy header without descr, fortran_order and shape: ${header.trim()}`);
  }
  const dtype = KINDS[descr[2]];
  if (!dtype) {
    throw new NpyError(
      `.npy dtype ${descr[1]}${descr[2]} is not uint8, uint16 or int32 (the token-row dtypes)`,
    );
  }
  if (order[1] === "True") throw new NpyError("a Fortran-order .npy array (C order expected)");
  const parts = shapeText[1].split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (!parts.every((s) => /^\d+$/.test(s))) {
    throw new NpyError(`a .npy shape that is not a tuple of sizes: (${shapeText[1]})`);
  }
  const shape = parts.map(Number);
  const width = DTYPE_BYTES[dtype];
  const size = shape.reduce((a, b) => a * b, 1) * width;
  const data = bytes.subarray(at + headerLength);
  if (data.length !== size) {
    throw new NpyError(
      `.npy data of ${data.length} bytes for shape (${
        shape.join(", ")
      }) of ${dtype}: ${size} expected`,
    );
  }
  const out = data.slice();
  // `>` is big-endian; `|`, `<`, `=` (native, written on little-endian hosts) are kept as is.
  if (descr[1] === ">" && width > 1) {
    for (let i = 0; i < out.length; i += width) out.subarray(i, i + width).reverse();
  }
  return { dtype, shape, bytes: out };
}

/**
 * A `.npy` (version 1.0) of little-endian `values` (what `np.save` writes for them): for test
 * doubles that speak an engine's format, and for the decoder's tests.
 */
export function encodeNpy(
  dtype: RowDtype,
  shape: readonly number[],
  values: Uint8Array,
): Uint8Array {
  const descr = { uint8: "|u1", uint16: "<u2", int32: "<i4" }[dtype];
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(", ");
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  // numpy pads the header with spaces so the data starts at a multiple of 64.
  header += " ".repeat(63 - (10 + header.length) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + values.length);
  out.set(MAGIC);
  out[6] = 1;
  new DataView(out.buffer).setUint16(8, header.length, true);
  out.set(new TextEncoder().encode(header), 10);
  out.set(values, 10 + header.length);
  return out;
}
