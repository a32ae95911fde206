/**
 * `/metrics` on rollouts: the reward histogram and the finished count grow at each finish through
 * the trainer API, and each group in memory is counted by status, the open and complete groups
 * summed.
 */
import assert from "node:assert/strict";
import { createGateway } from "../../gateway/mod.ts";
import { sharedModel } from "../support/scripted_policy.ts";

Deno.test("/metrics: reward histogram, finished rollouts, rollouts per group", async () => {
  const gw = createGateway({ model: await sharedModel() });
  const api = async (path: string, body: unknown) => {
    const res = await gw.app.request(`/api${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    assert.ok(res.ok, `${path}: ${res.status} ${await res.clone().text()}`);
    return await res.json();
  };
  const members: [string, string, number | null | "active"][] = [
    ["a0", "task-a", 1],
    ["a1", "task-a", 0],
    ["a2", "task-a", 0.5],
    ["b0", "task-b", 0],
    ["b1", "task-b", "active"],
    ["c0", "task-c", null],
    ["solo", "", 2],
  ];
  for (const [id, group, reward] of members) {
    await api("/rollouts", group ? { id, group } : { id });
    if (reward !== "active") await api(`/rollouts/${id}/finish`, { reward });
  }
  const text = await (await gw.app.request("/metrics")).text();
  const value = (series: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    assert.ok(line, `${series} in\n${text}`);
    return Number(line.slice(series.length + 1));
  };
  const le = (bound: string) => value(`rollgate_rollout_reward_bucket{le="${bound}"}`);
  // Rewards 1, 0, 0.5, 0, 2: cumulative buckets.
  assert.deepEqual(
    ["-1", "0", "0.25", "0.5", "0.9", "1", "2", "+Inf"].map(le),
    [0, 2, 2, 3, 3, 4, 5, 5],
  );
  assert.equal(value("rollgate_rollout_reward_sum"), 3.5);
  assert.equal(value("rollgate_rollout_reward_count"), 5);
  assert.equal(value('rollgate_rollouts_finished_total{reward="set"}'), 5);
  assert.equal(value('rollgate_rollouts_finished_total{reward="none"}'), 1);
  assert.equal(value('rollgate_group_rollouts{group="task-a",status="finished"}'), 3);
  assert.equal(value('rollgate_group_rollouts{group="task-a",status="active"}'), 0);
  assert.equal(value('rollgate_group_rollouts{group="task-b",status="active"}'), 1);
  assert.equal(value('rollgate_group_rollouts{group="task-b",status="finished"}'), 1);
  assert.equal(value('rollgate_group_rollouts{group="task-c",status="finished"}'), 1);
  assert.ok(!text.includes('group=""'), "a rollout without a group is in no group");
  assert.equal(value('rollgate_groups{state="open"}'), 1);
  assert.equal(value('rollgate_groups{state="complete"}'), 2);
  assert.equal(value("rollgate_active_rollouts"), 1);
  assert.match(text, /# TYPE rollgate_rollout_reward histogram/);
});
