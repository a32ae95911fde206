import assert from "node:assert/strict";
import test from "node:test";
import { toCsv } from "../src/csv.js";

test("plain fields", () => {
  assert.equal(toCsv([["a", 1], ["b", 2]]), "a,1\nb,2\n");
});
