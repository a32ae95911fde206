/**
 * Chains and their labels: a chain is a line of turns that extend each other; a new one is
 * labelled `main`, `subagent`, `compaction`, `side`, a fork of a recorded one (`retry`,
 * `rewrite`), or the continuation of one the engine's render no longer extends (`rerender`), and
 * a label policy says what the trainer gets for each label (`train`, `mask`, `drop`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { classifyChain, DEFAULT_LABEL_POLICY } from "./mod.ts";
 *
 * const first = classifyChain({ messages: [{ role: "user", content: "Fix the bug." }], tools: [], matched: 0 }, [], []);
 * assert.equal(first.label, "main");
 * assert.equal(DEFAULT_LABEL_POLICY[first.label], "train");
 * assert.equal(DEFAULT_LABEL_POLICY.side, "drop"); // titles, summaries: not trained by default
 * ```
 *
 * @module
 */
export {
  AGENT_TOOL_NAMES,
  type BranchLabel,
  type Chain,
  classifyChain,
  demoteToSide,
  type OpenAgentCall,
} from "./branch_label.ts";
export {
  DEFAULT_LABEL_POLICY,
  LABEL_ACTIONS,
  type LabelPolicy,
  POLICY_LABELS,
} from "./label_policy.ts";
export { type Rerender, rerenderFork, retryFork, rewriteFork } from "./fork_label.ts";
