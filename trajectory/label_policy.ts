/**
 * What the trainer gets for each kind of chain: `train` (loss on its sampled ids), `mask` (in the
 * sample, loss 0) or `drop` (no sample). `drift` applies per turn: a turn whose sampled ids a
 * template re-render would not reproduce. Drifting turns are trained by default: later prompts
 * carry their sampled ids verbatim (rollgate never re-renders them), so they are on-policy.
 *
 * @module
 */
import type { BranchLabel } from "./branch_label.ts";

export type LabelAction = "train" | "mask" | "drop";
export type PolicyLabel = BranchLabel | "drift";

/** Every label a policy names, in the order the README lists them. */
export const POLICY_LABELS = [
  "main",
  "subagent",
  "compaction",
  "rewrite",
  "retry",
  "side",
  "drift",
] as const satisfies readonly PolicyLabel[];
export type LabelPolicy = Record<PolicyLabel, LabelAction>;

export const DEFAULT_LABEL_POLICY: Readonly<LabelPolicy> = {
  main: "train",
  subagent: "train",
  compaction: "train",
  rewrite: "train",
  retry: "train",
  side: "drop",
  drift: "train",
};

/** Parses `main=train,side=drop` (the command-line form). */
export function parseLabelPolicy(text: string): Partial<LabelPolicy> {
  const out: Partial<LabelPolicy> = {};
  for (const part of text.split(",").map((p) => p.trim()).filter(Boolean)) {
    const [label, action] = part.split("=").map((x) => x.trim());
    if (!(label in DEFAULT_LABEL_POLICY)) throw new Error(`unknown label ${label} in ${text}`);
    if (!["train", "mask", "drop"].includes(action)) {
      throw new Error(`label ${label}: action must be train, mask or drop, got ${action}`);
    }
    out[label as PolicyLabel] = action as LabelAction;
  }
  return out;
}
