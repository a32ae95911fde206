/**
 * The scripted self-test policies through the whole loop, with each real CLI inside the local
 * sandbox: `gold` (the agent applies the gold patch with its own shell, a tool or a fenced block)
 * earns reward 1 on every shipped task; `noop` (a final answer, nothing done) earns 0 on every
 * shipped task. `wrong` (a broken patch that applies cleanly) earns 0: it checks the grader, not
 * the harness, so it runs with three CLIs only. A rollout takes 1–5 s here
 * (OpenCode, Qwen Code, mini-swe-agent and the Gemini CLI start slower than the first three).
 */
import assert from "node:assert/strict";
import { FINAL_TEXT, type PolicyName } from "../../runner/mod.ts";
import { loadTasks, SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import {
  assertWellFormed,
  CLIS,
  describe,
  runQuiet,
  shippedTaskIds,
  skipReason,
} from "./support.ts";
import { skipGroup } from "../support/skips.ts";

const TASK_IDS = await shippedTaskIds();
const GOLD = new Map((await loadTasks(SHIPPED_TASKS_DIR)).map((t) => [t.instance_id, t]));

/** Strips `index` lines (abbreviated blob ids) for comparing diffs. */
function body(diff: string): string {
  return diff.split("\n").filter((l) => !l.startsWith("index ")).join("\n");
}

async function withTmp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-runner-test-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function run(harness: string, policy: PolicyName) {
  let result!: Awaited<ReturnType<typeof runQuiet>>;
  await withTmp(async (dir) => {
    result = await runQuiet({
      tasks: SHIPPED_TASKS_DIR,
      harness,
      policy,
      out: `${dir}/results.jsonl`,
    });
  });
  assert.equal(result.records.length, TASK_IDS.length, result.log);
  assert.deepEqual(result.file.map((r) => r.rollout_id), result.records.map((r) => r.rollout_id));
  assert.deepEqual(result.records.map((r) => r.task).sort(), TASK_IDS);
  return result;
}

/**
 * The broken patch runs with the first three CLIs only (Anthropic, Responses, Chat): it checks the
 * grader, which no protocol changes, and each run costs half a minute here.
 */
const WRONG_PATCH_CLIS = new Set(["claude-code", "codex", "pi"]);

CLIS.forEach(({ h }) => {
  const skip = skipReason(h);
  const tag = skip ? ` [skipped: ${skip}]` : "";

  Deno.test({
    name: `runner ${h.name}: gold earns reward 1 on every shipped task${tag}`,
    ignore: skipGroup(`runner policies (${h.name})`, skip),
  }, async () => {
    const t0 = performance.now();
    const { records, table } = await run(h.name, "gold");
    console.log(
      `${h.name} gold × ${records.length}: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    for (const r of records) {
      assertWellFormed(r, h.name);
      assert.equal(r.reward, 1, describe(r));
      assert.equal(r.turns, 2, "a shell call, then the final answer");
      assert.equal(r.agent?.final_text?.trim(), FINAL_TEXT.applied);
      assert.equal(body(r.diff), body(GOLD.get(r.task)!.gold_patch), "the diff is the gold patch");
      assert.ok(r.tests.every((t) => t.passed));
    }
    assert.match(table, /^all\s+6\s+0\s+1\.00\s+1\.00$/m, table);
  });

  Deno.test({
    name: `runner ${h.name}: noop earns 0 on every task, nothing changed${tag}`,
    ignore: skipGroup(`runner policies (${h.name})`, skip),
  }, async () => {
    const { records } = await run(h.name, "noop");
    for (const r of records) {
      assertWellFormed(r, h.name);
      assert.equal(r.reward, 0, describe(r));
      assert.equal(r.diff, "");
      assert.equal(r.turns, 1);
      assert.equal(r.agent?.final_text?.trim(), FINAL_TEXT.noop);
      assert.ok(r.tests.some((t) => t.kind === "FAIL_TO_PASS" && !t.passed));
    }
  });

  if (!WRONG_PATCH_CLIS.has(h.name)) return;
  Deno.test({
    name: `runner ${h.name}: a wrong patch applies and earns 0 on every task${tag}`,
    ignore: skipGroup(`runner policies (${h.name})`, skip),
  }, async () => {
    const { records } = await run(h.name, "wrong");
    for (const r of records) {
      assertWellFormed(r, h.name);
      assert.equal(r.reward, 0, describe(r));
      assert.ok(r.diff.length > 0, "the agent changed something");
      assert.equal(r.eval?.patch_applied, true, "the grader applied it");
      assert.ok(r.tests.some((t) => t.kind === "FAIL_TO_PASS" && !t.passed));
    }
  });
});
