/**
 * What saved samples tell of their rollout's turns when the turns themselves are not at hand (a
 * results file holds samples, not the tree): each turn once (a fork's shared prefix is in several
 * samples), with the ids it added, its prompt length and what it sampled, from the samples'
 * `turn_spans`. Message-level (black-box) samples carry no ids and tell nothing here.
 *
 * @module
 */
import type { Sample } from "../trajectory/mod.ts";

/** One turn as the samples place it. */
export interface SampledTurn {
  turn: string;
  /** Ids the turn added to its parent's prompt and output, and sampled. */
  ids: number;
  /** The turn's whole prompt (everything before its output). */
  prompt: number;
  /** Ids it sampled. */
  sampled: number;
  /** Weight version of its last output id, when reported. */
  version: string | number | null;
}

/** The distinct turns of `samples`, in the order they first appear. */
export function sampledTurns(samples: readonly Sample[]): SampledTurn[] {
  const seen = new Map<string, SampledTurn>();
  for (const s of samples) {
    if (s.token_ids === false) continue;
    for (const span of s.turn_spans ?? []) {
      if (seen.has(span.turn)) continue;
      seen.set(span.turn, {
        turn: span.turn,
        ids: span.end - span.start,
        prompt: span.output_start,
        sampled: span.end - span.output_start,
        version: span.weight_version,
      });
    }
  }
  return [...seen.values()];
}
