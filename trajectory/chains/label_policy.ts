/**
 * What the trainer gets for each kind of chain: `train` (loss on its sampled ids), `mask` (in the
 * sample, loss 0) or `drop` (no sample). `drift` applies per turn: a turn whose sampled ids a
 * template re-render would not reproduce. Drifting turns are trained by default: later prompts
 * carry their sampled ids verbatim (rollgate never re-renders them), so they are on-policy.
 *
 * @module
 */
import { BRANCH_LABELS } from "./branch_label.ts";

/** Every label a policy sets an action for: the chain labels, and `drift` (per turn). */
export const POLICY_LABELS = [...BRANCH_LABELS, "drift"] as const;
export type PolicyLabel = typeof POLICY_LABELS[number];

export const LABEL_ACTIONS = ["train", "mask", "drop"] as const;
export type LabelAction = typeof LABEL_ACTIONS[number];

export type LabelPolicy = Record<PolicyLabel, LabelAction>;

export const DEFAULT_LABEL_POLICY: Readonly<LabelPolicy> = {
  main: "train",
  subagent: "train",
  compaction: "train",
  rewrite: "train",
  retry: "train",
  rerender: "train",
  side: "drop",
  drift: "train",
};
