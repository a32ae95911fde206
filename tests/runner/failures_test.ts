/**
 * Rollouts that cannot run: a broken sandbox backend gives records with `error` (reward 0, no
 * samples) that a resumed run tries again; a CLI missing from the local sandbox's agents dir is
 * refused before any rollout starts.
 */
import assert from "node:assert/strict";
import { pi } from "../../harness/mod.ts";
import { runRollouts } from "../../runner/mod.ts";
import { SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { assertWellFormed, runQuiet, skipReason } from "./support.ts";
import { skipGroup } from "../support/skips.ts";

const skip = skipReason(pi);
const tag = skip ? ` [skipped: ${skip}]` : "";

Deno.test({
  name: `runner: sandbox failures are recorded with error and re-run on resume${tag}`,
  ignore: skipGroup("runner failures (pi)", skip),
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-fail-" });
  try {
    const common = {
      tasks: `${SHIPPED_TASKS_DIR}/py-slug`,
      harness: pi.name,
      policy: "noop" as const,
      samples: 2,
      out: `${dir}/results.jsonl`,
    };
    const broken = await runQuiet({
      ...common,
      sandboxOptions: { local: { tempDir: `${dir}/does-not-exist` } },
    });
    assert.equal(broken.records.length, 2);
    for (const r of broken.records) {
      assert.match(r.error ?? "", /No such file or directory/);
      assert.equal(r.reward, 0);
      assert.deepEqual(r.samples, []);
      assert.equal(r.agent, null);
    }
    assert.match(broken.log, /error: .*No such file or directory/);
    assert.match(broken.table, /^py-slug\s+2\s+2\s+-\s+-\s+-$/m, broken.table);

    const fixed = await runQuiet(common);
    assert.equal(fixed.records.length, 2, "both failed rollouts ran again");
    for (const r of fixed.records) {
      assertWellFormed(r, pi.name);
      assert.equal(r.reward, 0);
    }
    assert.equal(fixed.file.length, 4, "the failed records stay in the file");
    assert.match(fixed.table, /^py-slug\s+2\s+0\s+0\.00\s+0\.00\s+0\.00$/m, fixed.table);
    const again = await runQuiet(common);
    assert.equal(again.records.length, 0, "good records are not re-run");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: `runner: a CLI missing from the agents dir is refused up front${tag}`,
  ignore: skipGroup("runner failures (pi)", skip),
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-fail-" });
  try {
    await assert.rejects(
      runRollouts({
        tasks: SHIPPED_TASKS_DIR,
        harness: "codex",
        sandbox: "local",
        samples: 1,
        concurrency: 1,
        policy: "gold",
        out: `${dir}/results.jsonl`,
        timeBudgetS: 10,
        model: "m",
        sandboxOptions: { local: { agentsDir: dir } },
      }),
      { name: "RunnerError", message: new RegExp(`^codex is not installed in ${dir}/\\.bin`) },
    );
    await assert.rejects(Deno.stat(`${dir}/results.jsonl`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
