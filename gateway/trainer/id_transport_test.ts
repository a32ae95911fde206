import assert from "node:assert/strict";
import {
  base64Float64,
  base64Ids,
  base64Mask,
  idsFromBase64,
  requestedIdEncoding,
} from "./id_transport.ts";

Deno.test("base64 ids: little-endian int32, round trip, known bytes", () => {
  assert.equal(base64Ids([151644, 872, 198]), "XFACAGgDAADGAAAA");
  assert.equal(base64Ids(Int32Array.of(1, -1, 65536)), "AQAAAP////8AAAEA");
  const ids = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 151669);
  assert.deepEqual(Array.from(idsFromBase64(base64Ids(ids))), ids);
  assert.equal(base64Ids([]), "");
});

Deno.test("base64 masks are one byte per id; logprobs little-endian float64", () => {
  assert.equal(base64Mask([0, 1, 1]), "AAEB");
  assert.equal(base64Float64([0, -0.25, -0.5]), "AAAAAAAAAAAAAAAAAADQvwAAAAAAAOC/");
  // A subarray is encoded from its own offset, not from its buffer's start.
  assert.equal(base64Mask(Uint8Array.of(9, 0, 1, 1).subarray(1)), "AAEB");
});

Deno.test("requested encoding: the query first, then Accept; JSON by default", () => {
  assert.equal(requestedIdEncoding(undefined, undefined), "json");
  assert.equal(requestedIdEncoding(undefined, "application/json"), "json");
  assert.equal(requestedIdEncoding(undefined, "application/vnd.rollgate.ids+base64"), "base64");
  assert.equal(requestedIdEncoding("json", "application/vnd.rollgate.ids+base64"), "json");
  assert.equal(requestedIdEncoding("base64", null), "base64");
  assert.throws(() => requestedIdEncoding("int32", null), /ids must be json or base64/);
});
