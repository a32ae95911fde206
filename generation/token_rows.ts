/**
 * Per-position engine data ("token rows"): one fixed-shape row of small integers per position of
 * a call's sequence, kept in the token-row store (the journal's table), not on the turn. The fields
 * ({@link TOKEN_ROW_FIELDS}):
 *
 * - `routed_experts` (MoE routing replay): for each position, the experts each layer routed it
 *   to, shape `[T, layers, top_k]`. A call's rows cover positions
 *   `from … len(prompt) + len(output) − 2`: the last sampled id has no forward pass in the call
 *   that sampled it (it is routed in the next call's prefill).
 * - `sampling_mask` (a sampler's kept set, vLLM's `sampling_mask`): for each sampled id, the ids
 *   that survived top-k/top-p and it was drawn from, shape `[T, 1, K]` int32, each row padded
 *   with −1 (`kept_sets.ts`). A call's rows cover its sampled positions
 *   `len(prompt) … len(prompt) + len(output) − 1`.
 *
 * On the wire they are `{dtype, shape, data}` with `data` the base64 of the little-endian
 * values, row after row; in process the bytes are kept as they came (narrowed by the engine
 * backends).
 *
 * @example
 * ```ts
 * import { decodeTokenRows, encodeTokenRows } from "./token_rows.ts";
 *
 * const rows = decodeTokenRows("routed_experts", {
 *   dtype: "uint8",
 *   shape: [2, 1, 2],
 *   data: "AQIDBA==",
 * }, 2);
 * encodeTokenRows(rows).shape; // [2, 1, 2]
 * ```
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** The per-position fields this gateway carries; each is validated and stored the same way. */
export const TOKEN_ROW_FIELDS = ["routed_experts", "sampling_mask"] as const;
export type TokenRowField = typeof TOKEN_ROW_FIELDS[number];

export const ROW_DTYPES = ["uint8", "uint16", "int32"] as const;
export type RowDtype = typeof ROW_DTYPES[number];

/** Bytes per value of each dtype. */
export const DTYPE_BYTES: Readonly<Record<RowDtype, number>> = { uint8: 1, uint16: 2, int32: 4 };

/**
 * Bounds a row's shape must keep (a row is `shape[1] × shape[2] …` values): 256 layers, 64
 * experts per token, 16 KiB a row. The largest MoE models today have 61–94 layers and top-8 to
 * top-10 routing (≤ 4 KiB a row as int32).
 */
export const TOKEN_ROW_LIMITS = { maxLayers: 256, maxTopK: 64, maxRowBytes: 16_384 };

/** A call's rows: `shape[0]` rows of `shape[1..]` values each, little-endian `bytes`. */
export interface TokenRows {
  dtype: RowDtype;
  shape: number[];
  bytes: Uint8Array;
}

/** How rows travel in JSON. */
export interface TokenRowsWire {
  dtype: string;
  shape: number[];
  data: string;
}

/** Rows that are not what was expected (shape, dtype, length, base64); the message says what. */
export class TokenRowsError extends Error {
  override name = "TokenRowsError";
}

/** Values per row of a shape (everything but the first dimension). */
export function rowValues(shape: readonly number[]): number {
  let n = 1;
  for (let i = 1; i < shape.length; i++) n *= shape[i];
  return n;
}

/** Bytes per row of rows of this dtype and shape. */
export function rowBytes(dtype: RowDtype, shape: readonly number[]): number {
  return rowValues(shape) * DTYPE_BYTES[dtype];
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Checks wire rows against what the call needs (`expectedRows` rows, and, when the chain already
 * has rows, the same `dtype` and row shape) and decodes them. Throws {@link TokenRowsError}.
 */
export function decodeTokenRows(
  field: TokenRowField,
  wire: TokenRowsWire,
  expectedRows: number,
  sameAs?: { dtype: RowDtype; shape: readonly number[] },
): TokenRows {
  const dtype = wire.dtype as RowDtype;
  if (!ROW_DTYPES.includes(dtype)) {
    throw new TokenRowsError(
      `${field}.dtype must be one of ${ROW_DTYPES.join(", ")}, got ${JSON.stringify(wire.dtype)}`,
    );
  }
  const shape = wire.shape;
  const { maxLayers, maxTopK, maxRowBytes } = TOKEN_ROW_LIMITS;
  if (
    !Array.isArray(shape) || shape.length !== 3 ||
    !shape.every((d) => Number.isInteger(d) && d >= 0) || shape[1] < 1 || shape[2] < 1
  ) {
    throw new TokenRowsError(
      `${field}.shape must be [T, layers, top_k] (integers, layers and top_k ≥ 1), got ${
        JSON.stringify(shape)
      }`,
    );
  }
  if (shape[1] > maxLayers || shape[2] > maxTopK || rowBytes(dtype, shape) > maxRowBytes) {
    throw new TokenRowsError(
      `${field}.shape ${
        JSON.stringify(shape)
      } is past the gateway's limit (at most ${maxLayers} layers, ${maxTopK} per token, ${maxRowBytes} bytes a row)`,
    );
  }
  if (shape[0] !== expectedRows) {
    throw new TokenRowsError(
      `${field} must have ${expectedRows} rows (T = shape[0]: positions routed_experts_from … len(prompt_ids) + len(output_ids) − 2), got ${
        shape[0]
      }`,
    );
  }
  if (sameAs && (sameAs.dtype !== dtype || !sameRow(sameAs.shape, shape))) {
    throw new TokenRowsError(
      `${field} must keep the chain's ${sameAs.dtype} rows of [${
        sameAs.shape.slice(1).join(", ")
      }], got ${dtype} rows of [${shape.slice(1).join(", ")}]`,
    );
  }
  if (typeof wire.data !== "string" || wire.data.length % 4 !== 0 || !BASE64.test(wire.data)) {
    throw new TokenRowsError(`${field}.data must be base64 (padded, standard alphabet)`);
  }
  const size = shape[0] * rowBytes(dtype, shape);
  const decodedSize = wire.data.length / 4 * 3 - (wire.data.match(/=*$/)![0].length);
  if (decodedSize !== size) {
    throw new TokenRowsError(
      `${field}.data must hold ${size} bytes (${shape.join(" × ")} ${dtype}), got ${decodedSize}`,
    );
  }
  // Decoded straight into its own buffer: no copy, no slice of a shared pool kept alive.
  return { dtype, shape: [...shape], bytes: fromBase64(wire.data) };
}

function sameRow(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => i === 0 || d === b[i]);
}

/** Base64 → bytes (one allocation where the runtime has `Uint8Array.fromBase64`). */
function fromBase64(text: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64;
  return native ? native(text) : new Uint8Array(Buffer.from(text, "base64"));
}

/** Rows as they travel in JSON. */
export function encodeTokenRows(rows: TokenRows): TokenRowsWire {
  const { bytes } = rows;
  return {
    dtype: rows.dtype,
    shape: rows.shape,
    data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
  };
}

/**
 * Little-endian int32 values (as SGLang sends them) in `dtype` (chosen once for an engine from
 * its number of experts, so every call of a chain has the same dtype): expert ids of models with
 * up to 256 experts fit a byte, a quarter of the bytes. Throws {@link TokenRowsError} on a value
 * that does not fit.
 */
export function narrowInt32Rows(int32: Uint8Array, shape: number[], dtype: RowDtype): TokenRows {
  const view = new DataView(int32.buffer, int32.byteOffset, int32.byteLength);
  const n = int32.byteLength / 4;
  if (dtype === "int32") return { dtype, shape, bytes: new Uint8Array(int32) };
  const max = dtype === "uint8" ? 255 : 65535;
  const out = new Uint8Array(n * DTYPE_BYTES[dtype]);
  const w = new DataView(out.buffer);
  for (let i = 0; i < n; i++) {
    const v = view.getInt32(i * 4, true);
    if (v < 0 || v > max) throw new TokenRowsError(`expert id ${v} does not fit ${dtype}`);
    if (dtype === "uint8") out[i] = v;
    else w.setUint16(i * 2, v, true);
  }
  return { dtype, shape, bytes: out };
}
