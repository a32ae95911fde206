import assert from "node:assert/strict";
import { idsJsonBytes, jsonWithIds } from "./ids_json.ts";

Deno.test("idsJsonBytes: what JSON.stringify writes for the same numbers, any int32", () => {
  const edge = [0, 1, 9, 10, 99, 100, 101, 999, 1000, 151643, 2147483647, -1, -10, -2147483648];
  let seed = 7;
  const random = Array.from({ length: 5000 }, () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return (seed % 2 ? 1 : -1) * (seed % 10 ** (1 + (seed % 10)));
  });
  for (const values of [[], edge, random]) {
    const ids = Int32Array.from(values);
    assert.equal(new TextDecoder().decode(idsJsonBytes(ids)), JSON.stringify(values));
  }
});

Deno.test("jsonWithIds: typed arrays as JSON arrays, the rest as JSON.stringify writes it", () => {
  const body = {
    request_id: "req_1",
    prompt_ids: Int32Array.of(151644, 872, 198),
    nested: { mask: Uint8Array.of(0, 1), logprobs: Float64Array.of(-0.5, -1e-7) },
    text: 'quotes " and \\u0000',
  };
  assert.deepEqual(JSON.parse(jsonWithIds(body)), {
    request_id: "req_1",
    prompt_ids: [151644, 872, 198],
    nested: { mask: [0, 1], logprobs: [-0.5, -1e-7] },
    text: 'quotes " and \\u0000',
  });
  assert.equal(jsonWithIds({ a: [1, 2] }), JSON.stringify({ a: [1, 2] }));
});
