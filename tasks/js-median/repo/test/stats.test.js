import assert from "node:assert/strict";
import test from "node:test";
import { mean, median } from "../src/stats.js";

test("mean of numbers", () => {
  assert.equal(mean([1, 2, 3, 4]), 2.5);
});

test("median odd length", () => {
  assert.equal(median([3, 1, 2]), 2);
});
