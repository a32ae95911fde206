/**
 * Shared pieces of the runner tests: one policy model per process, a quiet in-process run of the
 * rollout loop over a chosen subset of the shipped tasks, and skip conditions (bubblewrap, the
 * agent CLIs).
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Harness, HARNESSES } from "../../harness/mod.ts";
import { cliMissing, localSandboxMissing } from "../support/skips.ts";
import type { PolicyModel } from "../../model/mod.ts";
import { type RolloutRecord, type RolloutRunOptions, runRollouts } from "../../runner/mod.ts";
import { SHIPPED_TASKS_DIR } from "../../sandbox/mod.ts";
import { sharedModel } from "../support/scripted_policy.ts";

const NO_BWRAP = await localSandboxMissing();

/** Every harness. */
export const CLIS: { h: Harness }[] = Object.values(HARNESSES).map((h) => ({ h }));

/** Why a test for `h` is skipped, or `undefined` when it runs. */
export function skipReason(h: Harness): string | undefined {
  return NO_BWRAP ?? cliMissing(h);
}

/** The ids of the shipped tasks, sorted. */
export async function shippedTaskIds(): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of Deno.readDir(SHIPPED_TASKS_DIR)) {
    if (e.isDirectory) ids.push(e.name);
  }
  return ids.sort();
}

export interface QuietRun {
  records: RolloutRecord[];
  log: string;
  table: string;
  /** The results file's records. */
  file: RolloutRecord[];
}

/** Runs the loop in process with its output captured; `policyModel` shared. */
export async function runQuiet(
  o: Partial<RolloutRunOptions> & Pick<RolloutRunOptions, "tasks" | "harness" | "policy" | "out">,
): Promise<QuietRun> {
  let log = "";
  let table = "";
  const model: PolicyModel = await sharedModel();
  const outcome = await runRollouts({
    sandbox: "local",
    samples: 1,
    concurrency: 6,
    timeBudgetS: 120,
    model: "rollgate-policy",
    policyModel: model,
    log: (t) => log += t,
    print: (t) => table += t,
    tty: false,
    ...o,
  });
  const text = await Deno.readTextFile(o.out);
  const file = text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
  return { records: outcome.records, log, table, file };
}

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

/** What `main.ts rollout` did as a subprocess. */
export interface RolloutCommandRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `main.ts rollout <args>` as a subprocess (stdin from /dev/null); `env` replaces the environment. */
export async function rolloutCommand(
  args: string[],
  env?: Record<string, string>,
): Promise<RolloutCommandRun> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "rollout", ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    ...(env ? { env, clearEnv: true } : {}),
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    ms: Math.round(performance.now() - t0),
  };
}

/** A readable account of a record, for failed assertions. */
export function describe(r: RolloutRecord): string {
  const { samples: _, ...rest } = r;
  return JSON.stringify(rest, null, 1).slice(0, 6_000);
}

/** Checks what every graded record of a scripted run has. */
export function assertWellFormed(r: RolloutRecord, harness: string): void {
  assert.equal(r.error, undefined, describe(r));
  assert.equal(r.harness, harness);
  assert.match(r.rollout_id, /^[A-Za-z0-9_.:-]+$/);
  assert.ok(r.tests.length >= 2, describe(r));
  assert.equal(r.agent?.ok, true, `the agent run succeeded: ${describe(r)}`);
  assert.equal(r.policy_error, undefined, describe(r));
  assert.ok(r.samples.length >= 1, "the rollout has training samples");
  for (const s of r.samples as { reward: number; input_ids: number[]; loss_mask: number[] }[]) {
    assert.equal(s.reward, r.reward, "samples carry the rollout's reward");
    assert.equal(s.input_ids.length, s.loss_mask.length);
    assert.ok(s.loss_mask.some((m) => m === 1), "sampled ids are trained");
  }
  assert.ok(r.timings.total_ms >= (r.timings.agent_ms ?? 0));
}
