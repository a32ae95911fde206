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
  type SampleJson,
  sampleJson,
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
export {
  type CompactTreeExport,
  type CompactTurnRecord,
  compactTurnTree,
  expandCompactTree,
} from "./compact_tree.ts";
export { rolloutFromTree, TreeImportError } from "./tree_import.ts";
export {
  type BlackBoxAnswer,
  DEFAULT_ABANDON_GRACE_MS,
  DEFAULT_TURN_LIMITS,
  DEFAULT_TURN_TIMEOUT_MS,
  type TurnLimits,
  TurnRunner,
  type TurnRunnerOptions,
} from "./turn_runner.ts";
export type { EndedTurn, TurnObserver } from "./turn_observer.ts";
export { type HostCall, Rollout, type RolloutSampling, type RolloutStatus } from "./rollout.ts";
export {
  type CreateRollout,
  DEFAULT_ROLLOUT_IDLE_TIMEOUT_MS,
  RolloutExistsError,
  RolloutStore,
  type RolloutStoreOptions,
  UnknownRolloutError,
} from "./rollout_store.ts";
export { TurnError, type TurnErrorKind } from "./turn_error.ts";
export type { EventArrays, Journal, JournaledRollout, JournalEvent } from "./journal.ts";
export { JournalError, JournalWriter } from "./journal_writer.ts";
export { JournalReplayError, restore, type RestoreReport } from "./restore.ts";
export {
  DEFAULT_SAMPLES_KEPT_IN_MEMORY,
  type LoggedSample,
  MemorySampleLog,
  type SampleLog,
} from "./sample_log.ts";
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
export { MemoryTokenRowStore, type TokenRowStore } from "./token_row_store.ts";
export { TokenRowsGoneError, TokenRowsRef } from "./token_rows_ref.ts";
export { rowsFromFor, rowsOf, type RowsPlan, type RowsSegment } from "./chain_rows.ts";
export type { RowsMeta, SamplingFacts, TurnFacts } from "./turn_facts.ts";
export { type TurnSpan, versionNumber } from "./sample_facts.ts";
export {
  type CallExport,
  type CallsExport,
  callsExport,
  type ExportedRows,
  type SampleHead,
  type SegmentRows,
  type TreeExport,
  treeExport,
  type TreeSegment,
} from "./sample_exports.ts";
