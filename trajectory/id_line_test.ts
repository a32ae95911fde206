import assert from "node:assert/strict";
import { IdLine } from "./id_line.ts";

Deno.test("IdLine: appends at the tip, views without copying, grows and forks", () => {
  const line = new IdLine();
  line.append([1, 2, 3]);
  const prompt = line.view(0, 3);
  line.append(Int32Array.from({ length: 10_000 }, (_, i) => i));
  assert.equal(line.length, 10_003);
  assert.deepEqual(Array.from(prompt), [1, 2, 3], "a view handed out earlier keeps its ids");
  assert.deepEqual(Array.from(line.view(3, 6)), [0, 1, 2]);
  const fork = line.fork(4);
  fork.append([42]);
  assert.deepEqual(Array.from(fork.view(0, 5)), [1, 2, 3, 0, 42]);
  assert.equal(line.view(4, 5)[0], 1, "the fork copied: the line is unchanged");
  assert.throws(() => line.view(0, 10_004), RangeError);
  line.trim();
  assert.equal(line.byteLength, 10_003 * 4);
});
