import assert from "node:assert/strict";
import test from "node:test";
import { parseDuration } from "../src/duration.js";

test("parses a single unit", () => {
  assert.equal(parseDuration("45s"), 45_000);
  assert.equal(parseDuration("250ms"), 250);
});

test("rejects garbage", () => {
  assert.throws(() => parseDuration("abc"), TypeError);
});
