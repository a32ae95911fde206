/**
 * The rollout loop: agent CLIs (harness plugins) on SWE tasks inside sandboxes, against an
 * in-process gateway, graded in fresh sandboxes, one JSON record per rollout
 * (`main.ts rollout`, parsed in `cli/rollout.ts`; see docs/operations.md "Running agents on tasks").
 *
 * - `options.ts`: {@link RolloutRunOptions}, policies, defaults, {@link RunnerError}.
 * - `run.ts`: setup checks, gateway, concurrency, resume, summary.
 * - `serving.ts`: the `--backend` (gate, vLLM, a hosted API), checked before any rollout.
 * - `one_rollout.ts`: one rollout from creation to record.
 * - `sandbox_agent.ts`: the CLI inside a sandbox (config files, env, one exec with a budget).
 * - `scripted_policy.ts`, `patch_commands.ts`: the scripted SELF-TEST policies (`gold`, `noop`,
 *   hidden `wrong`), which answer the gate in process with real Qwen3 ids.
 * - `results_file.ts`: the JSONL results file; `report.ts`: progress bar and summary table;
 *   `pass_at_k.ts`: the unbiased pass@k estimator.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { formatSummary, passAtK, policyName, summarize } from "./mod.ts";
 *
 * // `runRollouts({ tasks, harness, sandbox, samples, policy, backend, out, … })` runs agents on
 * // tasks; its results file summarizes like this:
 * assert.equal(policyName("gold"), "gold");
 * assert.throws(() => policyName("clever"), /unknown policy clever/);
 * const table = formatSummary(summarize(["py-slug"], [], 4));
 * assert.match(table.split("\n")[0], /mean reward  pass@1  pass@2  pass@4$/);
 * // 2 of 4 samples passed: a random pair holds a pass with probability 1 − 1/6.
 * assert.ok(Math.abs(passAtK(4, 2, 2)! - 5 / 6) < 1e-12);
 * ```
 *
 * @module
 */
export {
  type BackendName,
  backendName,
  BACKENDS,
  DEFAULT_GATE_PORT,
  DEFAULT_MODEL_NAME,
  DEFAULT_TIME_BUDGET_S,
  type PolicyName,
  policyName,
  type RolloutRunOptions,
} from "./options.ts";
export { runRollouts } from "./run.ts";
export {
  answerText,
  containsRun,
  FINAL_TEXT,
  finalAnswerMessage,
  sampledIds,
  scriptedLogprob,
  scriptFor,
  shellActionMessage,
  toolCallMessage,
  toolCallText,
} from "./scripted_policy.ts";
export { applyPatchCommand, wrongPatch } from "./patch_commands.ts";
export { readRecords, recordKey, ResultsWriter, type RolloutRecord } from "./results_file.ts";
export { formatSummary, Progress, summarize } from "./report.ts";
export { passAtK } from "./pass_at_k.ts";
