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
 * const pending = await rollouts.next(1_000);
 * const sampled = await model.tokenizer.encode("<think>\n\n</think>\n\nHello!<|im_end|>");
 * await rollouts.complete(pending!.request_id, { output_ids: sampled, finish_reason: "stop" });
 * assert.equal((await turn.result).message.content, "Hello!");
 * const [sample] = await rollouts.finish(rollout, 1);
 * assert.equal(sample.loss_mask.reduce((n, x) => n + x, 0), sampled.length);
 * ```
 *
 * @module
 */
export { ancestorAt, type HistoryNode, promptIds, type Turn } from "./turn.ts";
export type { ImageStore } from "./image_store.ts";
export {
  type Chain,
  DEFAULT_LABEL_POLICY,
  LABEL_ACTIONS,
  type LabelPolicy,
  POLICY_LABELS,
} from "./chains/mod.ts";
export { type KnownHistory, MessageNode, sameForm, sameMessage, TurnTree } from "./tree/mod.ts";
export {
  buildSamples,
  type CallsExport,
  callsExport,
  chainOf,
  type LoggedSample,
  MemorySampleLog,
  type Sample,
  sampleJson,
  type SampleLog,
  type SampleOptions,
  type TreeExport,
  treeExport,
  versionNumber,
} from "./samples/mod.ts";
export {
  auditTree,
  type CompactTreeExport,
  compactTurnTree,
  expandCompactTree,
  formatAudit,
  formatTree,
  rolloutFromTree,
  type SharedPrefixTree,
  sharedPrefixTree,
  TreeImportError,
  type TurnRecord,
  turnTree,
  type TurnTreeExport,
} from "./export/mod.ts";
export {
  DEFAULT_TURN_LIMITS,
  type EndedTurn,
  type TurnLimits,
  type TurnObserver,
  TurnRunner,
} from "./turns/mod.ts";
export { RolloutActions } from "./rollout_actions.ts";
export type { TeacherScoring } from "./turns/mod.ts";
export { Rollout } from "./rollout.ts";
export { RolloutExistsError, RolloutStore, UnknownRolloutError } from "./rollout_store.ts";
export { TurnError, type TurnErrorKind } from "./turn_error.ts";
export { TurnRewardError, type TurnRewardErrorKind } from "./turn_rewards.ts";
export {
  type Journal,
  type JournaledRollout,
  JournalError,
  type JournalEvent,
} from "./journaling/mod.ts";
export { type RestoreReport } from "./restore.ts";
export {
  type KeptSetsPlan,
  KeptSetsRef,
  rowsOf,
  type RowsPlan,
  TokenRowsRef,
  type TokenRowStore,
} from "./token_rows/mod.ts";
