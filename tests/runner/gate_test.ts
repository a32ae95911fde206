/**
 * `--policy gate`: the runner's gateway is served on TCP and an external trainer (the HTTP test
 * double from `tests/support`) drives the rollout through `/api`, receiving the finished samples
 * on `/api/samples/stream`. Without a trainer, the wall-clock budget ends the agent; an
 * interrupted run records nothing and leaves no process behind.
 */
import assert from "node:assert/strict";
import { codex, pi } from "../../harness/mod.ts";
import { scriptFor } from "../../runner/mod.ts";
import { loadTasks, SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { ScriptedPolicy, sharedModel } from "../support/scripted_policy.ts";
import { assertWellFormed, describe, runQuiet, skipReason } from "./support.ts";
import { skipGroup } from "../support/skips.ts";
import { within } from "../support/within.ts";

const TASK_DIR = `${SHIPPED_TASKS_DIR}/py-lru`;
const [TASK] = await loadTasks(TASK_DIR);

/** PIDs whose environment holds `needle`. */
async function environMatching(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name) || Number(e.name) === Deno.pid) continue;
    try {
      if ((await Deno.readTextFile(`/proc/${e.name}/environ`)).includes(needle)) {
        pids.push(Number(e.name));
      }
    } catch { /* exited */ }
  }
  return pids;
}

async function withTmp<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-gate-" });
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Reads the first JSON line of the sample stream. */
async function firstStreamedSample(res: Response): Promise<Record<string, unknown>> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  try {
    while (!buf.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
    }
  } finally {
    await reader.cancel();
  }
  return JSON.parse(buf.split("\n")[0]);
}

const skipPi = skipReason(pi);
Deno.test({
  name: "runner gate: an external trainer answers over TCP /api and streams the samples" +
    (skipPi ? ` [skipped: ${skipPi}]` : ""),
  ignore: skipGroup("runner gate (pi)", skipPi),
}, async () => {
  const gold = scriptFor("gold", pi, TASK, await sharedModel());
  await withTmp(async (dir) => {
    let trainer: ScriptedPolicy | undefined;
    let stream: Promise<Record<string, unknown>> | undefined;
    let log = "";
    try {
      const run = await runQuiet({
        tasks: TASK_DIR,
        harness: pi.name,
        policy: "gate",
        gatewayPort: 0,
        out: `${dir}/results.jsonl`,
        log: (t) => {
          log += t;
          const url = /trainer API (http:\/\/\S+)\/api\)/.exec(t)?.[1];
          if (url && !trainer) {
            trainer = new ScriptedPolicy(url, ({ ids }) => gold(ids));
            trainer.start();
            stream = fetch(`${url}/api/samples/stream`).then(firstStreamedSample);
          }
        },
      });
      assert.ok(trainer, `the gateway URL was printed: ${log}`);
      assert.match(
        log,
        /waiting for a trainer: GET http:\/\/127\.0\.0\.1:\d+\/api\/requests\/next/,
      );
      const [r] = run.records;
      assertWellFormed(r, pi.name);
      assert.equal(r.reward, 1, describe(r));
      assert.equal(trainer.records.length, 2, "the trainer answered both turns");
      assert.ok(trainer.records.every((x) => x.rollout_id === r.rollout_id));
      const streamed = await within("the first streamed sample", 60_000, stream!);
      assert.equal(streamed.rollout_id, r.rollout_id);
      assert.equal(streamed.reward, 1);
      // The stream adds its cursor (for a reconnecting trainer); the rest is the sample itself.
      const { cursor, ...sample } = streamed;
      assert.equal(cursor, 1, "the first sample of the stream");
      assert.deepEqual(sample, r.samples[0], "the record holds what the trainer received");
    } finally {
      await trainer?.stop();
    }
  });
});

const skipCodex = skipReason(codex);
Deno.test({
  name: "runner gate: without a trainer the time budget ends the agent; reward 0" +
    (skipCodex ? ` [skipped: ${skipCodex}]` : ""),
  ignore: skipGroup("runner gate (codex)", skipCodex),
}, async () => {
  await withTmp(async (dir) => {
    const prefix = `budget${crypto.randomUUID().slice(0, 6)}`;
    let seen: number[] = [];
    const probe = (async () => {
      for (let i = 0; i < 40 && seen.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await environMatching(`ROLLGATE_ROLLOUT_ID=${prefix}`);
      }
    })();
    const t0 = performance.now();
    const run = await runQuiet({
      tasks: TASK_DIR,
      harness: codex.name,
      policy: "gate",
      gatewayPort: 0,
      timeBudgetS: 2,
      rolloutPrefix: prefix,
      out: `${dir}/results.jsonl`,
    });
    await probe;
    const [r] = run.records;
    assert.ok(performance.now() - t0 < 20_000, "the budget was kept");
    assert.equal(r.error, undefined, describe(r));
    assert.equal(r.reward, 0);
    assert.equal(r.agent?.timed_out, true, describe(r));
    assert.equal(r.agent?.ok, false);
    assert.equal(r.agent?.error, "timed out after 2 s");
    assert.equal(r.diff, "");
    assert.ok(seen.length > 0, "the probe saw the agent's processes while it ran");
    assert.deepEqual(await environMatching(`ROLLGATE_ROLLOUT_ID=${prefix}`), [], "none left");
  });
});

Deno.test({
  name: "runner: an interrupted run records nothing and leaves no agent behind" +
    (skipCodex ? ` [skipped: ${skipCodex}]` : ""),
  ignore: skipGroup("runner gate (codex)", skipCodex),
}, async () => {
  await withTmp(async (dir) => {
    const prefix = `abort${crypto.randomUUID().slice(0, 6)}`;
    const abort = new AbortController();
    const watcher = (async () => {
      for (let i = 0; i < 100; i++) {
        await new Promise((r) => setTimeout(r, 100));
        if ((await environMatching(`ROLLGATE_ROLLOUT_ID=${prefix}`)).length) break;
      }
      abort.abort();
    })();
    const run = await runQuiet({
      tasks: SHIPPED_TASKS_DIR,
      harness: codex.name,
      policy: "gate",
      gatewayPort: 0,
      concurrency: 2,
      rolloutPrefix: prefix,
      signal: abort.signal,
      out: `${dir}/results.jsonl`,
    });
    await watcher;
    assert.deepEqual(run.records, []);
    assert.deepEqual(run.file, [], "nothing half-done in the results file");
    assert.match(run.table, /^all\s+0\s+0\s+-\s+-$/m, run.table);
    assert.deepEqual(await environMatching(`ROLLGATE_ROLLOUT_ID=${prefix}`), []);
  });
});
