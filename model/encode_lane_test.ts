import assert from "node:assert/strict";
import { EncodeLane } from "./encode_lane.ts";

Deno.test("EncodeLane: at most `width` at once, in order of arrival, errors free the slot", async () => {
  const lane = new EncodeLane(2);
  let running = 0, most = 0;
  const order: number[] = [];
  const work = (i: number) => async () => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 2));
    running--;
    order.push(i);
    if (i === 1) throw new Error("encode failed");
    return i;
  };
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => lane.run(work(i))));
  assert.equal(most, 2);
  assert.deepEqual(results.map((r) => r.status), [
    "fulfilled",
    "rejected",
    "fulfilled",
    "fulfilled",
    "fulfilled",
  ]);
  assert.deepEqual(order.slice(0, 2).sort(), [0, 1]);
  assert.deepEqual(order.slice(2), [2, 3, 4]);
  assert.equal(lane.waiting, 0);
  // Every slot came back: `width` more run at once again.
  running = most = 0;
  await Promise.all([5, 6].map((i) => lane.run(work(i))));
  assert.equal(most, 2);
});

Deno.test("EncodeLane: a width below 1 is refused", () => {
  assert.throws(() => new EncodeLane(0), RangeError);
});
