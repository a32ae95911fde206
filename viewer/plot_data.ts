/**
 * What the plots page draws, aggregated from the rollouts in one pass per page: reward over time
 * and by weight version, GRPO groups (rewards and group-relative advantages), prompt and sampled
 * lengths per turn, turns per rollout and failures over time. Everything is binned or capped here,
 * so a page's size does not grow with the rollouts (time in at most {@link TIME_BINS} bins,
 * histograms in at most {@link HISTOGRAM_BINS}, the latest {@link GROUPS_SHOWN} groups, the latest
 * {@link VERSIONS_SHOWN} versions); the work is one walk over the rollouts and their turns.
 *
 * @module
 */
import type { Rollout } from "../trajectory/mod.ts";
import { runRow } from "./run_rows.ts";
import { sampledTurns } from "./sample_turns.ts";
import type { ViewedRollout } from "./source.ts";

export const TIME_BINS = 40;
export const HISTOGRAM_BINS = 30;
export const GROUPS_SHOWN = 12;
export const VERSIONS_SHOWN = 40;
/** Added to a group's standard deviation before dividing, as trainers do (and the Python client). */
export const ADVANTAGE_EPS = 1e-6;

/** One rollout, as far as the plots need it. */
export interface RolloutFacts {
  id: string;
  group: string;
  /** When it ended (finished or recorded), else when it was created; ms since the epoch. */
  at: number | null;
  /** Its reward, once finished without an infrastructure error. */
  reward: number | null;
  /** It has an error (the runner's, grading's, the agent's, or a failed turn's). */
  failed: boolean;
  /** The newest weight version its turns reported. */
  version: string | number | null;
  turns: number;
  /** Per turn with ids: its prompt's length and what it sampled. */
  prompts: number[];
  sampled: number[];
}

function newest(a: string | number | null, b: string | number | null | undefined) {
  if (b === null || b === undefined) return a;
  if (a === null) return b;
  const x = Number(a), y = Number(b);
  return Number.isFinite(x) && Number.isFinite(y) ? (y > x ? b : a) : b;
}

function liveTurns(r: Rollout) {
  const prompts: number[] = [], sampled: number[] = [];
  let version: string | number | null = null;
  for (const t of r.turns) {
    if (t.status !== "done" || t.blackBox) continue;
    prompts.push(t.promptLength);
    sampled.push(t.outputIds.length);
    version = newest(version, t.facts?.versions?.at(-1)?.[1] ?? t.weightVersion);
  }
  return { prompts, sampled, version };
}

export function rolloutFacts(v: ViewedRollout): RolloutFacts {
  const row = runRow(v);
  const r = v.rollout, x = v.result;
  let prompts: number[] = [], sampled: number[] = [];
  let version: string | number | null = null;
  if (r) ({ prompts, sampled, version } = liveTurns(r));
  else {
    for (const t of sampledTurns(v.samples())) {
      prompts.push(t.prompt);
      sampled.push(t.sampled);
      version = newest(version, t.version);
    }
  }
  const ended = r
    ? r.finishedAt ?? null
    : x
    ? Date.parse(x.timings.started_at) + x.timings.total_ms
    : null;
  const finished = r ? r.status === "finished" : x !== null;
  const group = (r ? r.group : v.samples()[0]?.group) ?? row.task ?? v.id;
  return {
    id: v.id,
    group,
    at: ended !== null && !Number.isNaN(ended) ? ended : row.created,
    reward: finished && row.status !== "error" ? row.reward : null,
    failed: row.error !== null,
    version,
    turns: row.turns?.total ?? 0,
    prompts,
    sampled,
  };
}

/** A span of a numeric axis with what fell in it. */
export interface Bin {
  from: number;
  to: number;
  n: number;
}

export interface TimeBin extends Bin {
  /** Mean reward of the bin's rewarded rollouts; null when none. */
  mean: number | null;
  rewarded: number;
  failed: number;
}

export interface GroupView {
  group: string;
  /** Members with a reward, and their advantage: (reward − mean) / (std + eps). */
  members: { id: string; reward: number; advantage: number }[];
  /** Members without a reward yet (running) or failed. */
  waiting: number;
  mean: number;
  std: number;
}

export interface PlotData {
  rollouts: number;
  rewarded: number;
  failed: number;
  meanReward: number | null;
  time: { from: number; to: number; bins: TimeBin[] } | null;
  versions: { version: string; mean: number; n: number }[];
  /** Versions left out (the oldest) beyond {@link VERSIONS_SHOWN}. */
  versionsHidden: number;
  groups: {
    /** The latest groups with a reward, oldest first. */
    shown: GroupView[];
    /** Groups with at least one reward. */
    total: number;
    /** Groups of two or more rewards that are all equal: every advantage is 0, no signal. */
    flat: number;
  };
  prompts: Bin[];
  sampled: Bin[];
  turns: Bin[];
  /** Turns with ids counted in the length histograms. */
  lengthTurns: number;
}

/** A "nice" step (1, 2 or 5 × 10ⁿ) of at least `raw`. */
export function niceStep(raw: number): number {
  if (!(raw > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw * (1 - 1e-9))!;
}

/**
 * Counts of non-negative integers in at most `maxBins` bins of a nice width from 0; empty when
 * there are none.
 */
export function histogram(values: readonly number[], maxBins = HISTOGRAM_BINS): Bin[] {
  if (values.length === 0) return [];
  let max = 0;
  for (const v of values) if (v > max) max = v;
  const width = Math.max(1, niceStep((max + 1) / maxBins));
  const bins: Bin[] = Array.from(
    { length: Math.floor(max / width) + 1 },
    (_, i) => ({ from: i * width, to: (i + 1) * width, n: 0 }),
  );
  for (const v of values) bins[Math.floor(v / width)].n++;
  return bins;
}

function timeBins(facts: readonly RolloutFacts[]): PlotData["time"] {
  const dated = facts.filter((f) => f.at !== null);
  if (dated.length === 0) return null;
  let from = Infinity, to = -Infinity;
  for (const f of dated) {
    from = Math.min(from, f.at!);
    to = Math.max(to, f.at!);
  }
  const count = Math.min(TIME_BINS, dated.length);
  const width = Math.max(1, (to - from) / count);
  const bins = Array.from({ length: count }, (_, i) => ({
    from: from + i * width,
    to: from + (i + 1) * width,
    n: 0,
    rewarded: 0,
    failed: 0,
    mean: 0 as number | null,
  }));
  for (const f of dated) {
    const b = bins[Math.min(count - 1, Math.floor((f.at! - from) / width))];
    b.n++;
    if (f.failed) b.failed++;
    if (f.reward !== null) {
      b.rewarded++;
      b.mean! += f.reward;
    }
  }
  for (const b of bins) b.mean = b.rewarded ? b.mean! / b.rewarded : null;
  return { from, to: from + count * width, bins };
}

function versionRows(facts: readonly RolloutFacts[]) {
  const byVersion = new Map<string, { sum: number; n: number; order: number }>();
  for (const f of facts) {
    if (f.reward === null || f.version === null) continue;
    const key = String(f.version);
    const v = byVersion.get(key) ?? { sum: 0, n: 0, order: byVersion.size };
    v.sum += f.reward;
    v.n++;
    byVersion.set(key, v);
  }
  const numeric = [...byVersion.keys()].every((k) => Number.isFinite(Number(k)));
  const rows = [...byVersion.entries()]
    .sort(([a, x], [b, y]) => numeric ? Number(a) - Number(b) : x.order - y.order)
    .map(([version, v]) => ({ version, mean: v.sum / v.n, n: v.n }));
  return { rows: rows.slice(-VERSIONS_SHOWN), hidden: Math.max(0, rows.length - VERSIONS_SHOWN) };
}

/** The group-relative advantages of one group's rewarded members. */
export function groupView(group: string, members: readonly RolloutFacts[]): GroupView {
  const rewarded = members.filter((m) => m.reward !== null);
  const mean = rewarded.reduce((s, m) => s + m.reward!, 0) / (rewarded.length || 1);
  const std = Math.sqrt(
    rewarded.reduce((s, m) => s + (m.reward! - mean) ** 2, 0) / (rewarded.length || 1),
  );
  return {
    group,
    members: rewarded.map((m) => ({
      id: m.id,
      reward: m.reward!,
      advantage: (m.reward! - mean) / (std + ADVANTAGE_EPS),
    })),
    waiting: members.length - rewarded.length,
    mean,
    std,
  };
}

function groupViews(facts: readonly RolloutFacts[]): PlotData["groups"] {
  const byGroup = new Map<string, RolloutFacts[]>();
  const last = new Map<string, number>();
  for (const f of facts) {
    const list = byGroup.get(f.group);
    if (list) list.push(f);
    else byGroup.set(f.group, [f]);
    last.set(f.group, Math.max(last.get(f.group) ?? -Infinity, f.at ?? -Infinity));
  }
  let total = 0, flat = 0;
  const rewarded: string[] = [];
  for (const [group, members] of byGroup) {
    const rewards = members.flatMap((m) => m.reward === null ? [] : [m.reward]);
    if (rewards.length === 0) continue;
    total++;
    rewarded.push(group);
    if (rewards.length >= 2 && rewards.every((r) => r === rewards[0])) flat++;
  }
  const shown = rewarded.sort((a, b) => last.get(a)! - last.get(b)! || (a < b ? -1 : 1))
    .slice(-GROUPS_SHOWN)
    .map((g) => groupView(g, byGroup.get(g)!));
  return { shown, total, flat };
}

/** Every plot's data over `rollouts`. */
export function plotData(rollouts: readonly ViewedRollout[]): PlotData {
  const facts = rollouts.map(rolloutFacts);
  const rewards = facts.flatMap((f) => f.reward === null ? [] : [f.reward]);
  const prompts: number[] = [], sampled: number[] = [];
  for (const f of facts) {
    for (const p of f.prompts) prompts.push(p);
    for (const s of f.sampled) sampled.push(s);
  }
  const versions = versionRows(facts);
  return {
    rollouts: facts.length,
    rewarded: rewards.length,
    failed: facts.filter((f) => f.failed).length,
    meanReward: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
    time: timeBins(facts),
    versions: versions.rows,
    versionsHidden: versions.hidden,
    groups: groupViews(facts),
    prompts: histogram(prompts),
    sampled: histogram(sampled),
    turns: histogram(facts.map((f) => f.turns)),
    lengthTurns: prompts.length,
  };
}
