/**
 * Rollouts, their turns and message tree, and the samples built from them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RolloutActions } from "./mod.ts";
 * import { PolicyModel } from "../model/mod.ts";
 *
 * const model = await PolicyModel.load();
 * const rollouts = new RolloutActions({ model }); // generation through its interception gate
 * const rollout = await rollouts.create({ metadata: { task: "demo" } });
 * const turn = await rollouts.startTurn(rollout, {
 *   protocol: "chat",
 *   model: "policy",
 *   messages: [{ role: "user", content: "Say hello." }],
 *   tools: [],
 *   sampling: {},
 *   stream: false,
 * }, "call_");
 * // A trainer takes the request and answers with the ids its engine sampled.
 * const pending = await rollouts.gate.next(1_000);
 * const sampled = await model.tokenizer.encode("<think>\n\n</think>\n\nHello!<|im_end|>");
 * await rollouts.complete(pending!.request_id, { output_ids: sampled, finish_reason: "stop" });
 * assert.equal((await turn.result).message.content, "Hello!");
 * const [sample] = await rollouts.finish(rollout, 1);
 * assert.equal(sample.loss_mask.reduce((n, x) => n + x, 0), sampled.length);
 * ```
 *
 * @module
 */
export { promptIds, type Turn } from "./turn.ts";
export { MessageNode, TurnTree } from "./turn_tree.ts";
export { sameMessage } from "./same_message.ts";
export { buildSamples, chainOf, type Sample, sampleJson, type SampleOptions } from "./samples.ts";
export { type Chain } from "./branch_label.ts";
export {
  DEFAULT_LABEL_POLICY,
  LABEL_ACTIONS,
  type LabelPolicy,
  POLICY_LABELS,
} from "./label_policy.ts";
export {
  type SharedPrefixTree,
  sharedPrefixTree,
  type TurnRecord,
  turnTree,
  type TurnTreeExport,
} from "./tree_export.ts";
export { type CompactTreeExport, compactTurnTree, expandCompactTree } from "./compact_tree.ts";
export { rolloutFromTree, TreeImportError } from "./tree_import.ts";
export { TurnRunner } from "./turn_runner.ts";
export { DEFAULT_TURN_LIMITS, type TurnLimits } from "./turn_flight.ts";
export { RolloutActions } from "./rollout_actions.ts";
export type { EndedTurn, TurnObserver } from "./turn_observer.ts";
export { Rollout } from "./rollout.ts";
export { RolloutExistsError, RolloutStore, UnknownRolloutError } from "./rollout_store.ts";
export { TurnError, type TurnErrorKind } from "./turn_error.ts";
export type { Journal, JournaledRollout, JournalEvent } from "./journal.ts";
export { JournalError } from "./journal_writer.ts";
export { type RestoreReport } from "./restore.ts";
export { type LoggedSample, MemorySampleLog, type SampleLog } from "./sample_log.ts";
export { auditTree, formatAudit } from "./audit.ts";
export { formatTree } from "./inspect.ts";
export type { TokenRowStore } from "./token_row_store.ts";
export { TokenRowsRef } from "./token_rows_ref.ts";
export { rowsOf, type RowsPlan } from "./chain_rows.ts";
export { versionNumber } from "./sample_facts.ts";
export { type CallsExport, callsExport, type TreeExport, treeExport } from "./sample_exports.ts";
