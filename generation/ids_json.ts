/**
 * JSON text for bodies that carry token ids as typed arrays (a prompt is a view of its chain's
 * `Int32Array`): each typed array is written as the JSON array of its numbers, digit by digit
 * into bytes, without first building a JavaScript array of the ids. Everything else is what
 * `JSON.stringify` writes.
 *
 * @example
 * ```ts
 * import { jsonWithIds } from "./ids_json.ts";
 *
 * jsonWithIds({ input_ids: Int32Array.of(151644, 872, 198), rid: "r1" });
 * // '{"input_ids":[151644,872,198],"rid":"r1"}'
 * ```
 *
 * @module
 */

/**
 * Marks where a typed array goes: a string no body holds (control characters and a nonce drawn
 * at start), written by JSON.stringify as one quoted, escaped token.
 */
const MARK = `\u0000ids:${crypto.randomUUID()}\u0001`;
const QUOTED_MARK = JSON.stringify(MARK);
const latin1 = new TextDecoder("latin1");

/** Two ASCII digits per number below 100, for writing ids two digits at a time. */
const PAIRS = Uint8Array.from(
  { length: 200 },
  (_, i) => 0x30 + (i % 2 ? (i >> 1) % 10 : (i >> 1) / 10 | 0),
);

/** The JSON array of `ids` (int32 values) as ASCII bytes. */
export function idsJsonBytes(ids: Int32Array | Uint32Array | Uint8Array | Uint16Array): Uint8Array {
  // 11 bytes hold any int32 with its sign; one more for the comma.
  const out = new Uint8Array(ids.length * 12 + 2);
  const digits = new Uint8Array(12);
  let at = 0;
  out[at++] = 0x5b; // [
  for (let i = 0; i < ids.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    let v = ids[i];
    if (v < 0) {
      out[at++] = 0x2d; // -
      v = -v;
    }
    let d = 12;
    while (v >= 100) {
      const q = (v / 100) | 0, r = (v - q * 100) << 1;
      digits[--d] = PAIRS[r + 1];
      digits[--d] = PAIRS[r];
      v = q;
    }
    if (v >= 10) {
      digits[--d] = PAIRS[(v << 1) + 1];
      digits[--d] = PAIRS[v << 1];
    } else digits[--d] = 0x30 + v;
    while (d < 12) out[at++] = digits[d++];
  }
  out[at++] = 0x5d; // ]
  return out.subarray(0, at);
}

/**
 * `JSON.stringify(value)`, with every typed array written as a JSON array of its numbers (integer
 * arrays digit by digit; other typed arrays through a plain array, as JSON.stringify writes them).
 */
export function jsonWithIds(value: unknown): string {
  const arrays: (Int32Array | Uint32Array | Uint8Array | Uint16Array)[] = [];
  const text = JSON.stringify(value, (_key, v) => {
    if (
      v instanceof Int32Array || v instanceof Uint32Array || v instanceof Uint16Array ||
      v instanceof Uint8Array
    ) {
      arrays.push(v);
      return MARK;
    }
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return Array.from(v as Float64Array);
    return v;
  });
  if (arrays.length === 0) return text;
  const parts = text.split(QUOTED_MARK);
  let out = parts[0];
  for (let i = 0; i < arrays.length; i++) {
    out += latin1.decode(idsJsonBytes(arrays[i])) + parts[i + 1];
  }
  return out;
}
