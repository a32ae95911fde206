import assert from "node:assert/strict";
import { promptDifferences } from "./prompt_differences.ts";

// Prompt: 1 2 | gen 3, sampled 4 5 | 6 7 | gen 3, sampled 8 | 9
const prompt = [1, 2, 3, 4, 5, 6, 7, 3, 8, 9];
const windows = [
  { turn: "a", start: 2, output: 3, end: 5 },
  { turn: "b", start: 7, output: 8, end: 9 },
];
const places = (full: number[]) =>
  promptDifferences(prompt, full, windows).map((d) => [d.turn, d.in, d.gateway, d.full_render]);

Deno.test("promptDifferences: equal, and each kept window placed on its own", () => {
  assert.deepEqual(places(prompt), []);
  // Turn a's sampled 5 dropped, turn b's generation prompt 3 written as 30.
  assert.deepEqual(places([1, 2, 3, 4, 6, 7, 30, 8, 9]), [
    ["a", "sampled_ids", [4, 5], [4, 4]],
    ["b", "generation_prompt", [7, 8], [6, 7]],
  ]);
  // Turn a's generation prompt and sampled ids merged into one id.
  assert.deepEqual(places([1, 2, 34, 5, 6, 7, 3, 8, 9]), [
    ["a", "generation_prompt_and_sampled_ids", [2, 4], [2, 3]],
  ]);
});

Deno.test("promptDifferences: a difference outside the windows is elsewhere, after the kept ones", () => {
  assert.deepEqual(places([1, 2, 3, 4, 6, 7, 3, 8, 0]), [
    ["a", "sampled_ids", [4, 5], [4, 4]],
    [null, "elsewhere", [9, 10], [8, 9]],
  ]);
  // Before any window: the rest is elsewhere.
  assert.deepEqual(places([0, 2, 3, 4, 5, 6, 7, 3, 8, 9]), [
    [null, "elsewhere", [0, 10], [0, 10]],
  ]);
  // No windows: a longer render differs at the end.
  assert.deepEqual(
    promptDifferences([1, 2], [1, 2, 3], []).map((d) => [d.in, d.gateway, d.full_render]),
    [["elsewhere", [2, 2], [2, 3]]],
  );
});
