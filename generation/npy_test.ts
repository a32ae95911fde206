/**
 * The `.npy` reader against bytes numpy 2.3.5 wrote (`np.save`, `numpy.lib.format.write_array`
 * with version 2.0), recorded here as base64: what vLLM's `numpy2base64` sends.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { decodeNpy, encodeNpy, NpyError } from "./npy.ts";

const b64 = (s: string) => new Uint8Array(Buffer.from(s, "base64"));
/** numpy's bytes, by what they hold. */
const NUMPY = {
  /** `np.arange(12, dtype=np.uint8).reshape(3, 2, 2)` */
  u8:
    "k05VTVBZAQB2AHsnZGVzY3InOiAnfHUxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsIDIsIDIpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAQIDBAUGBwgJCgs=",
  /** `(np.arange(6, dtype=np.uint16) * 300).reshape(2, 1, 3)` */
  u16:
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPHUyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDEsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAACwBWAKEA7AE3AU=",
  /** the same as `>u2` (big-endian) */
  u16be:
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPnUyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDEsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAEsAlgDhASwBdw=",
  /** `(np.arange(4, dtype=np.int32) * 70000).reshape(1, 2, 2)` */
  i32:
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPGk0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsIDIsIDIpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAcBEBAOAiAgBQNAMA",
  /** `np.arange(4, dtype=np.uint8).reshape(2, 1, 2)`, format version 2.0 */
  v2:
    "k05VTVBZAgB0AAAAeydkZXNjcic6ICd8dTEnLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoMiwgMSwgMiksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAQID",
  /** `np.zeros((0, 4, 2), dtype=np.uint8)`: no rows */
  empty:
    "k05VTVBZAQB2AHsnZGVzY3InOiAnfHUxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDAsIDQsIDIpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAo=",
  /** `np.asfortranarray(np.arange(6, dtype=np.uint8).reshape(2, 3, 1))` */
  fortran:
    "k05VTVBZAQB2AHsnZGVzY3InOiAnfHUxJywgJ2ZvcnRyYW5fb3JkZXInOiBUcnVlLCAnc2hhcGUnOiAoMiwgMywgMSksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAwEEAgU=",
  /** `np.zeros((2, 1, 1), dtype=np.float32)` */
  f32:
    "k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDEsIDEpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAAAAAA==",
};

function values(rows: { dtype: string; bytes: Uint8Array }): number[] {
  const { bytes } = rows;
  if (rows.dtype === "uint8") return [...bytes];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return rows.dtype === "uint16"
    ? Array.from({ length: bytes.length / 2 }, (_, i) => view.getUint16(i * 2, true))
    : Array.from({ length: bytes.length / 4 }, (_, i) => view.getInt32(i * 4, true));
}

Deno.test("npy: numpy's uint8, uint16 and int32 arrays, header versions 1.0 and 2.0", () => {
  const u8 = decodeNpy(b64(NUMPY.u8));
  assert.deepEqual([u8.dtype, u8.shape], ["uint8", [3, 2, 2]]);
  assert.deepEqual(values(u8), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  const u16 = decodeNpy(b64(NUMPY.u16));
  assert.deepEqual([u16.dtype, u16.shape], ["uint16", [2, 1, 3]]);
  assert.deepEqual(values(u16), [0, 300, 600, 900, 1200, 1500]);
  const i32 = decodeNpy(b64(NUMPY.i32));
  assert.deepEqual([i32.dtype, i32.shape], ["int32", [1, 2, 2]]);
  assert.deepEqual(values(i32), [0, 70000, 140000, 210000]);
  const v2 = decodeNpy(b64(NUMPY.v2));
  assert.deepEqual([v2.shape, values(v2)], [[2, 1, 2], [0, 1, 2, 3]]);
  assert.deepEqual(decodeNpy(b64(NUMPY.empty)).shape, [0, 4, 2]);
});

Deno.test("npy: values come out little-endian whatever order numpy wrote", () => {
  const be = decodeNpy(b64(NUMPY.u16be));
  assert.deepEqual(values(be), [0, 300, 600, 900, 1200, 1500]);
  assert.deepEqual(be.bytes, decodeNpy(b64(NUMPY.u16)).bytes);
});

Deno.test("npy: encodeNpy writes numpy's own bytes", () => {
  const rows = decodeNpy(b64(NUMPY.u8));
  assert.equal(
    Buffer.from(encodeNpy("uint8", rows.shape, rows.bytes)).toString("base64"),
    NUMPY.u8,
  );
  const u16 = decodeNpy(b64(NUMPY.u16));
  assert.equal(
    Buffer.from(encodeNpy("uint16", u16.shape, u16.bytes)).toString("base64"),
    NUMPY.u16,
  );
});

Deno.test("npy: what is not a C-order token-row array is refused, saying why", () => {
  const bad: [Uint8Array, RegExp][] = [
    [new TextEncoder().encode("[1, 2, 3]"), /no \\x93NUMPY magic/],
    [b64(NUMPY.u8).slice(0, 40), /header cut short/],
    [b64(NUMPY.u8).slice(0, -1), /data of 11 bytes for shape \(3, 2, 2\) of uint8: 12 expected/],
    [b64(NUMPY.f32), /dtype <f4 is not uint8, uint16 or int32/],
    [b64(NUMPY.fortran), /Fortran-order/],
    [Uint8Array.of(...b64(NUMPY.u8).slice(0, 6), 9, 0, 0, 0), /version 9\.0 is not known/],
  ];
  const noShape = b64(NUMPY.u8);
  noShape.set(new TextEncoder().encode("'shap_'"), noShape.indexOf(0x27, 50)); // 'shape' → 'shap_'
  bad.push([noShape, /without descr, fortran_order and shape/]);
  for (const [bytes, message] of bad) {
    assert.throws(() => decodeNpy(bytes), (e) => e instanceof NpyError && message.test(e.message));
  }
});
