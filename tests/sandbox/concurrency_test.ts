/**
 * Scale on a small machine: 16 concurrent SWE episodes on the local sandbox, each agent calling
 * the gateway through its own rollout socket before applying the gold patch, each graded in a
 * fresh sandbox. All earn reward 1; no temp dir, process or socket survives.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { loadTasks, LocalProvider, runEpisode, SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { entries, waitNoProcesses } from "./support/leaks.ts";

const CONCURRENCY = 16;

const CALL_GATEWAY = `python3 -c '
import json, urllib.request
req = urllib.request.Request("http://127.0.0.1:8787/v1/chat/completions", data=b"{}", method="POST")
print(json.load(urllib.request.urlopen(req, timeout=20))["rollout"])'`;
import { localSandboxMissing, skipGroup } from "../support/skips.ts";

Deno.test({
  name: "scale: 16 concurrent episodes (agent + eval sandboxes) on the local backend",
  ignore: skipGroup("sandbox concurrency", await localSandboxMissing()),
}, async () => {
  const tasks = await loadTasks(SHIPPED_TASKS_DIR);
  const tempDir = await Deno.makeTempDir({ prefix: "rollgate-test-" });
  const seen: string[] = [];
  const gateway = new Hono();
  gateway.post("/rollout/:id/v1/chat/completions", (c) => {
    seen.push(c.req.param("id"));
    return c.json({ rollout: c.req.param("id") });
  });
  const provider = new LocalProvider({ tempDir });
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: CONCURRENCY }, (_, i) => {
      const task = tasks[i % tasks.length];
      return runEpisode({
        provider,
        task,
        gateway: { rolloutId: `r${i}`, fetch: gateway.fetch },
        agent: async (sbx) => {
          const called = await sbx.exec(CALL_GATEWAY, { timeoutMs: 60_000 });
          await sbx.writeFile("/tmp/fix.patch", task.gold_patch);
          await sbx.exec("git apply /tmp/fix.patch");
          return called.stdout.trim();
        },
      });
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  console.log(`${CONCURRENCY} episodes in ${seconds.toFixed(1)} s`);
  results.forEach((r, i) => {
    assert.equal(r.agent, `r${i}`, "each sandbox reaches only its own rollout");
    assert.equal(r.report.reward, 1, JSON.stringify(r.report));
  });
  assert.deepEqual(seen.sort(), Array.from({ length: CONCURRENCY }, (_, i) => `r${i}`).sort());
  assert.deepEqual(await waitNoProcesses(tempDir), []);
  assert.deepEqual(await entries(tempDir), [], "no sandbox root or socket left");
  await Deno.remove(tempDir);
});
