/**
 * Per-turn facts of a sample, aligned with its `input_ids`: where each turn's ids lie, whether its
 * output carries loss here, the weight version of each output id (as runs), the sampling facts,
 * and staleness. A trainer bounds or measures off-policy-ness from these (`version_span`) and
 * uses the sampling facts to know what its logprobs mean.
 *
 * Staleness: with a bound `max_staleness` N (per rollout or gateway), a turn whose oldest weight
 * version is more than N versions older than the rollout's reference version at finish (the
 * finish call's `weight_version`, else the newest version the rollout's turns saw) is not trained
 * (loss 0) and is marked `stale`; the rollout's reward still counts for every sample. Versions
 * are compared as numbers; a turn whose version is not a number is never stale.
 *
 * @module
 */
import type { VersionRun } from "../../generation/mod.ts";
import type { Turn } from "../turn.ts";
import type { SamplingFacts } from "../turn_facts.ts";

/** One turn inside a sample. Positions index `input_ids`. */
export interface TurnSpan {
  turn: string;
  chain: number;
  /** Where the turn's own ids start (its bridge and delta, then its output). */
  start: number;
  output_start: number;
  end: number;
  /** Its output carries loss in this sample. */
  trained: boolean;
  /**
   * The version in force when its first output id was sampled (null: not reported); when its
   * ids came from several versions, `weight_versions` has each.
   */
  weight_version: string | number | null;
  /** Only when chunks came from several versions: `[position in input_ids, version]` runs. */
  weight_versions?: VersionRun[];
  /** The version the completion reported (at its end), when it reported one. */
  completion_version?: string | number;
  sampling: SamplingFacts | null;
  /** Older than the staleness bound at finish: not trained. */
  stale?: true;
  /** Its producer reported no logprobs: its outputs' `logprobs` are NaN (JSON `null`). */
  logprobs_absent?: true;
  /** The reward a trainer posted for this turn (`POST /api/rollouts/:id/turns/:turn/reward`). */
  reward?: number;
}

/** A sample's per-turn rewards, when any turn of the rollout has one. */
export interface TurnRewardFields {
  /** One per `turn_spans` entry: its reward, `null` where none was posted. */
  turn_rewards: (number | null)[];
  /**
   * Aligned with `input_ids`: each turn's reward at its last sampled id (NaN, JSON `null`, for a
   * turn without one), 0 everywhere else: the per-position form trainers add to their returns.
   */
  position_rewards: Float64Array;
}

/**
 * Puts each span's reward on it and gives the two aligned forms; undefined (nothing added) when
 * the rollout has no per-turn reward.
 */
export function turnRewardFields(
  spans: TurnSpan[],
  rewards: ReadonlyMap<string, number> | null | undefined,
  length: number,
): TurnRewardFields | undefined {
  if (!rewards || rewards.size === 0) return undefined;
  const position_rewards = new Float64Array(length);
  const turn_rewards = spans.map((span) => {
    const reward = rewards.get(span.turn);
    if (reward !== undefined) span.reward = reward;
    if (span.end > span.output_start) position_rewards[span.end - 1] = reward ?? NaN;
    return reward ?? null;
  });
  return { turn_rewards, position_rewards };
}

/** The weight version each output id of a turn came from, as runs over its outputs. */
export function versionRuns(turn: Turn): VersionRun[] {
  if (turn.facts?.versions) return turn.facts.versions;
  return turn.weightVersion === undefined ? [] : [[0, turn.weightVersion]];
}

/** Every version a turn names: its runs (its first id's first) and the one at completion. */
function versionsOf(turn: Turn): (string | number)[] {
  const all = versionRuns(turn).map(([, v]) => v);
  const last = turn.facts?.completionVersion;
  if (last !== undefined) all.push(last);
  return all;
}

/** A version as a number, when it is one (`7`, `"7"`). */
export function versionNumber(v: string | number | null | undefined): number | null {
  if (v === null || v === undefined || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

/** The newest numeric version any of `turns` saw (the default reference for staleness). */
export function newestVersion(turns: readonly Turn[]): number | null {
  let newest: number | null = null;
  for (const t of turns) {
    for (const v of versionsOf(t)) {
      const n = versionNumber(v);
      if (n !== null && (newest === null || n > newest)) newest = n;
    }
  }
  return newest;
}

/**
 * Whether a turn is older than `max` versions behind `reference`, by its oldest version: the one
 * its first id was sampled under (`weightVersion`, where its runs start), never the one at
 * completion, so a turn that waited in a queue across an update is as old as when it started.
 */
export function isStale(turn: Turn, reference: number | null, max: number | undefined): boolean {
  if (max === undefined || reference === null) return false;
  const runs = versionRuns(turn);
  if (runs.length === 0) return false;
  const oldest = Math.min(...runs.map(([, v]) => versionNumber(v) ?? Infinity));
  return Number.isFinite(oldest) && reference - oldest > max;
}

/** The span of a turn placed at `start` (its output at `outputStart`) in a sample. */
export function turnSpan(
  t: Turn,
  start: number,
  outputStart: number,
  trained: boolean,
  stale: boolean,
): TurnSpan {
  const runs = versionRuns(t);
  const span: TurnSpan = {
    turn: t.id,
    chain: t.chain,
    start,
    output_start: outputStart,
    end: outputStart + t.outputIds.length,
    trained,
    weight_version: t.weightVersion ?? null,
    sampling: t.facts?.sampling ?? null,
  };
  if (runs.length > 1) span.weight_versions = runs.map(([at, v]) => [outputStart + at, v]);
  const last = t.facts?.completionVersion;
  if (last !== undefined) span.completion_version = last;
  if (stale) span.stale = true;
  if (!t.logprobs && t.outputIds.length > 0) span.logprobs_absent = true;
  return span;
}

/** `[oldest, newest]` version over a sample's turns (numerically when all are numbers). */
export function versionSpan(
  spans: readonly TurnSpan[],
): [string | number, string | number] | null {
  const all: (string | number)[] = [];
  for (const s of spans) {
    if (s.weight_versions) { for (const [, v] of s.weight_versions) all.push(v); }
    else if (s.weight_version !== null) all.push(s.weight_version);
    if (s.completion_version !== undefined) all.push(s.completion_version);
  }
  if (all.length === 0) return null;
  if (all.every((v) => versionNumber(v) !== null)) {
    const sorted = [...all].sort((a, b) => versionNumber(a)! - versionNumber(b)!);
    return [sorted[0], sorted.at(-1)!];
  }
  // Versions that are not numbers have no order here: first and last seen.
  return [all[0], all.at(-1)!];
}
