/**
 * Rollouts, their turns and message tree, and the samples built from them.
 *
 * @module
 */
export {
  answerId,
  type Drift,
  type MountKind,
  promptIds,
  pushAll,
  type ToolSpan,
  type Turn,
  type TurnStatus,
} from "./turn.ts";
export { MessageNode, type Mount, TurnTree } from "./turn_tree.ts";
export { sameJson, sameMessage } from "./same_message.ts";
export {
  buildSample,
  buildSamples,
  chainLeaves,
  chainOf,
  DEFAULT_SAMPLE_OPTIONS,
  type Sample,
  type SampleOptions,
} from "./samples.ts";
export {
  AGENT_TOOL_NAMES,
  BRANCH_LABELS,
  type BranchLabel,
  type Chain,
  classifyChain,
} from "./branch_label.ts";
export { type HistoryChange, messageChange } from "./history_change.ts";
export {
  DEFAULT_LABEL_POLICY,
  LABEL_ACTIONS,
  type LabelAction,
  type LabelPolicy,
  POLICY_LABELS,
  type PolicyLabel,
} from "./label_policy.ts";
export { findDrift } from "./drift.ts";
export { findToolSpans } from "./tool_spans.ts";
export {
  type SharedPrefixTree,
  sharedPrefixTree,
  type TurnRecord,
  turnTree,
  type TurnTreeExport,
} from "./tree_export.ts";
export { rolloutFromTree, TreeImportError } from "./tree_import.ts";
export { type BlackBoxAnswer, TurnRunner } from "./turn_runner.ts";
export type { EndedTurn, TurnObserver } from "./turn_observer.ts";
export { Rollout, type RolloutSampling, type RolloutStatus } from "./rollout.ts";
export { type CreateRollout, RolloutExistsError, RolloutStore } from "./rollout_store.ts";
export { TurnError, type TurnErrorKind } from "./turn_error.ts";
export {
  auditTree,
  describeFork,
  describeSpecialText,
  DRIFT_NOTE,
  formatAudit,
  type RolloutAudit,
  type TurnAudit,
} from "./audit.ts";
export { formatTree } from "./inspect.ts";
