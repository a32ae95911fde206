/**
 * Scale on a small machine: 18 gold rollouts (6 tasks × 3 samples) with 16 at once, one CLI
 * (Codex, the fastest to start), local sandboxes in a dedicated temp dir. Every rollout earns
 * reward 1, at most 16 overlap, and afterwards no sandbox root, socket, bwrap, forwarder or CLI
 * process survives, and the gateway's TCP port is closed.
 */
import assert from "node:assert/strict";
import { codex } from "../../harness/mod.ts";
import type { RolloutRecord } from "../../runner/mod.ts";
import { SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { entries, waitNoProcesses } from "../sandbox/support/leaks.ts";
import { assertWellFormed, describe, runQuiet, skipReason } from "./support.ts";
import { skipGroup } from "../support/skips.ts";

const CONCURRENCY = 16;
const SAMPLES = 3;

/** PIDs whose environment holds `needle` (every agent process gets `ROLLGATE_ROLLOUT_ID`). */
async function environMatching(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      const env = await Deno.readTextFile(`/proc/${e.name}/environ`);
      if (env.includes(needle)) pids.push(Number(e.name));
    } catch { /* exited, or not ours to read */ }
  }
  return pids;
}

/** The largest number of rollouts running at the same moment. */
function maxOverlap(records: RolloutRecord[]): number {
  const events = records.flatMap((r) => {
    const start = Date.parse(r.timings.started_at);
    return [[start, 1], [start + r.timings.total_ms, -1]] as [number, number][];
  }).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, now += d);
  return max;
}

const skip = skipReason(codex);
Deno.test({
  name: `runner: ${CONCURRENCY} concurrent gold rollouts, no leaked dirs, sockets or processes` +
    (skip ? ` [skipped: ${skip}]` : ""),
  ignore: skipGroup("runner concurrency (codex)", skip),
}, async () => {
  const tempDir = await Deno.makeTempDir({ prefix: "rollgate-runner-scale-" });
  const prefix = `scale${crypto.randomUUID().slice(0, 6)}`;
  await Deno.mkdir(`${tempDir}/sandboxes`);
  try {
    const t0 = performance.now();
    let gatewayUrl = "";
    const run = await runQuiet({
      tasks: SHIPPED_TASKS_DIR,
      harness: codex.name,
      policy: "gold",
      samples: SAMPLES,
      concurrency: CONCURRENCY,
      out: `${tempDir}/results.jsonl`,
      rolloutPrefix: prefix,
      sandboxOptions: { local: { tempDir: `${tempDir}/sandboxes` } },
      log: (t) => gatewayUrl ||= /gateway (http:\/\/\S+)/.exec(t)?.[1] ?? "",
    });
    const seconds = (performance.now() - t0) / 1000;
    const overlap = maxOverlap(run.records);
    console.log(`${run.records.length} rollouts, ${overlap} at once, in ${seconds.toFixed(1)} s`);

    assert.equal(run.records.length, 6 * SAMPLES);
    for (const r of run.records) {
      assertWellFormed(r, codex.name);
      assert.equal(r.reward, 1, describe(r));
    }
    const pairs = new Set(run.records.map((r) => `${r.task}#${r.sample}`));
    assert.equal(pairs.size, 6 * SAMPLES, "every (task, sample) once");
    assert.ok(overlap <= CONCURRENCY, `at most ${CONCURRENCY} at once, saw ${overlap}`);
    assert.ok(overlap > CONCURRENCY / 2, `the pool really ran in parallel (saw ${overlap})`);

    assert.deepEqual(await entries(`${tempDir}/sandboxes`), [], "no sandbox root or socket left");
    assert.deepEqual(await waitNoProcesses(`${tempDir}/sandboxes`), [], "no bwrap left");
    // Every process of an agent run (the CLI, what it started, the gateway forwarder) has the
    // rollout id in its environment.
    assert.deepEqual(await environMatching(`ROLLGATE_ROLLOUT_ID=${prefix}`), [], "no CLI left");
    assert.match(gatewayUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    await assert.rejects(fetch(`${gatewayUrl}/health`), "the gateway port is closed");
  } finally {
    await Deno.remove(tempDir, { recursive: true });
  }
});
