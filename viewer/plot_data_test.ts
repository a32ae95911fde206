import assert from "node:assert/strict";
import { groupView, histogram, niceStep, plotData, type RolloutFacts } from "./plot_data.ts";
import { savedSource } from "./source.ts";
import type { RunResult } from "./source.ts";

Deno.test("histogram: nice widths from 0, every value in one bin, at most the bins asked", () => {
  assert.deepEqual(histogram([]), []);
  assert.deepEqual(histogram([0, 0, 2]), [
    { from: 0, to: 1, n: 2 },
    { from: 1, to: 2, n: 0 },
    { from: 2, to: 3, n: 1 },
  ]);
  const values = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 12_345);
  const bins = histogram(values, 30);
  assert.ok(bins.length <= 30);
  assert.equal(bins[0].from, 0);
  assert.equal(bins.reduce((n, b) => n + b.n, 0), 1000);
  const width = bins[0].to;
  assert.ok([1, 2, 5].includes(width / 10 ** Math.floor(Math.log10(width))), `nice: ${width}`);
  assert.deepEqual([niceStep(0.3), niceStep(3), niceStep(41), niceStep(500)], [0.5, 5, 50, 500]);
});

Deno.test("group view: advantages relative to the group, 0 for a flat group", () => {
  const m = (id: string, reward: number | null): RolloutFacts => ({
    id,
    group: "g",
    at: 0,
    reward,
    failed: false,
    version: null,
    turns: 1,
    prompts: [],
    sampled: [],
  });
  const g = groupView("g", [m("a", 1), m("b", 0), m("c", 0), m("d", 0), m("e", null)]);
  assert.equal(g.waiting, 1);
  assert.equal(g.mean, 0.25);
  assert.ok(Math.abs(g.std - Math.sqrt(3) / 4) < 1e-12);
  assert.ok(Math.abs(g.members[0].advantage - 0.75 / (Math.sqrt(3) / 4 + 1e-6)) < 1e-9);
  const flat = groupView("g", [m("a", 1), m("b", 1)]);
  assert.deepEqual(flat.members.map((x) => x.advantage), [0, 0]);
});

Deno.test("plot data of a results file: the group is the samples' (else the task), lengths from spans", () => {
  const result = (id: string, task: string, reward: number, group: string | null): RunResult => ({
    rollout_id: id,
    task,
    sample: 0,
    harness: "pi",
    reward,
    tests: [],
    diff: "",
    agent: null,
    timings: { started_at: "2026-01-01T10:00:00.000Z", agent_ms: 1, eval_ms: 1, total_ms: 60_000 },
    samples: [{
      rollout_id: id,
      group,
      turn_spans: [
        { turn: "t0", start: 0, output_start: 10, end: 14, weight_version: 3 },
        { turn: "t1", start: 14, output_start: 20, end: 25, weight_version: 4 },
      ],
    }],
    policy: "gold",
    sandbox: "local",
    turns: 2,
    eval: null,
  });
  const d = plotData(
    savedSource([], [result("a", "t", 1, "grp"), result("b", "t", 0, null), {
      ...result("c", "t", 0, null),
      error: "sandbox failed",
    }]).list(),
  );
  assert.deepEqual([d.rollouts, d.rewarded, d.failed, d.meanReward], [3, 2, 1, 0.5]);
  assert.deepEqual(d.groups.shown.map((g) => [g.group, g.members.length, g.waiting]).sort(), [
    ["grp", 1, 0],
    ["t", 1, 1],
  ]);
  assert.deepEqual(d.versions, [{ version: "4", mean: 0.5, n: 2 }]);
  assert.equal(d.lengthTurns, 6);
  assert.deepEqual(d.prompts.filter((b) => b.n).map((b) => [b.from, b.n]), [[10, 3], [20, 3]]);
  assert.equal(d.time!.bins.reduce((n, b) => n + b.n, 0), 3);
});
