/**
 * Linearizing a rollout's turns into training samples: one per chain, root to leaf.
 *
 * `input_ids` is the leaf's prompt followed by its output; `loss_mask` is 1 exactly on sampled
 * ids, and `logprobs` is aligned with `input_ids` (0 where nothing was sampled).
 *
 * @module
 */
import { type MountKind, pushAll, type Turn } from "./turn.ts";

export interface Sample {
  rollout_id: string;
  index: number;
  /** `main` for the chain of the rollout's first turn, `rewritten` for chains started later. */
  branch: "main" | "rewritten";
  /** Turn ids from root to leaf. */
  turns: string[];
  input_ids: number[];
  loss_mask: number[];
  logprobs: number[];
  reward: number | null;
  finish_reason: string | null;
  /** Number of ids with loss (sampled by the policy). */
  num_sampled: number;
  metadata: Record<string, unknown>;
}

/** Finished turns that no other finished turn extends. */
export function leafTurns(turns: readonly Turn[]): Turn[] {
  const extended = new Set<Turn>();
  for (const t of turns) if (t.status === "done" && t.parent) extended.add(t.parent);
  return turns.filter((t) => t.status === "done" && !extended.has(t));
}

function chainOf(leaf: Turn): Turn[] {
  const chain: Turn[] = [];
  for (let t: Turn | null = leaf; t; t = t.parent) chain.push(t);
  return chain.reverse();
}

function pushFill(target: number[], value: number, count: number): void {
  for (let i = 0; i < count; i++) target.push(value);
}

export function buildSample(
  leaf: Turn,
  index: number,
  reward: number | null,
  metadata: Record<string, unknown> = {},
): Sample {
  const chain = chainOf(leaf);
  const input_ids: number[] = [], loss_mask: number[] = [], logprobs: number[] = [];
  for (const t of chain) {
    const context = t.bridgeIds.length + t.deltaIds.length;
    pushAll(input_ids, t.bridgeIds);
    pushAll(input_ids, t.deltaIds);
    pushFill(loss_mask, 0, context);
    pushFill(logprobs, 0, context);
    pushAll(input_ids, t.outputIds);
    pushFill(loss_mask, 1, t.outputIds.length);
    if (t.logprobs) pushAll(logprobs, t.logprobs);
    else pushFill(logprobs, 0, t.outputIds.length);
  }
  const root: MountKind = chain[0].mount;
  return {
    rollout_id: leaf.rolloutId,
    index,
    branch: root === "rewritten" ? "rewritten" : "main",
    turns: chain.map((t) => t.id),
    input_ids,
    loss_mask,
    logprobs,
    reward,
    finish_reason: leaf.finishReason ?? null,
    num_sampled: chain.reduce((n, t) => n + t.outputIds.length, 0),
    metadata,
  };
}

export function buildSamples(
  turns: readonly Turn[],
  reward: number | null,
  metadata: Record<string, unknown> = {},
): Sample[] {
  return leafTurns(turns).map((leaf, i) => buildSample(leaf, i, reward, metadata));
}
