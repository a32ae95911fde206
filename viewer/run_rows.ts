/**
 * The runs table: one row per rollout (status, backend, turns, tokens, reward, tests, labels,
 * timings), filtered and sorted as the page's query asks, and a per-task summary.
 *
 * @module
 */
import type { ViewedRollout } from "./source.ts";
import { sampledTurns } from "./sample_turns.ts";

export type RunStatus = "active" | "finished" | "error" | "recorded";

export interface RunRow {
  id: string;
  status: RunStatus;
  task: string | null;
  sample: number | null;
  harness: string | null;
  backend: string | null;
  turns: { total: number; done: number; pending: number; failed: number } | null;
  /** Distinct ids recorded: what every turn added plus what it sampled. */
  tokens: number | null;
  reward: number | null;
  tests: { passed: number; total: number } | null;
  /** Chains per label. */
  labels: Record<string, number>;
  drift: number;
  retries: number;
  error: string | null;
  /** Milliseconds since the epoch. */
  created: number | null;
  /** Wall-clock milliseconds from creation to finish (or to now while active). */
  duration: number | null;
}

function text(v: unknown): string | null {
  return typeof v === "string" ? v : typeof v === "number" ? String(v) : null;
}

export function runRow(v: ViewedRollout, now = Date.now()): RunRow {
  const r = v.rollout, x = v.result;
  const meta = r?.metadata ?? {};
  const labels: Record<string, number> = {};
  for (const c of r?.chains ?? []) labels[c.label] = (labels[c.label] ?? 0) + 1;
  let tokens = 0, drift = 0, retries = 0, done = 0, pending = 0, failed = 0;
  for (const t of r?.turns ?? []) {
    tokens += t.bridgeIds.length + t.deltaIds.length + t.outputIds.length;
    if (t.drift) drift++;
    retries += t.retries;
    if (t.status === "done") done++;
    else if (t.status === "pending") pending++;
    else failed++;
  }
  const turnErrors = r?.turns.filter((t) => t.error).map((t) => t.error!) ?? [];
  const error = x?.error ?? x?.eval?.error ?? x?.agent?.error ?? turnErrors.at(-1) ?? null;
  const started = r?.createdAt ?? (x ? Date.parse(x.timings.started_at) : NaN);
  // A results file holds the samples, not the turns: count what they place.
  const saved = !r && x ? sampledTurns(v.samples()) : null;
  const status: RunStatus = x?.error
    ? "error"
    : r
    ? (r.status === "active" ? "active" : "finished")
    : "recorded";
  return {
    id: v.id,
    status,
    task: x?.task ?? text(meta.task),
    sample: x?.sample ?? (typeof meta.sample === "number" ? meta.sample : null),
    harness: x?.harness ?? text(meta.harness),
    backend: r ? r.backend ?? "default" : x?.backend ?? null,
    turns: r
      ? { total: r.turns.length, done, pending, failed }
      : x
      ? { total: x.turns, done: x.turns, pending: 0, failed: 0 }
      : null,
    tokens: r ? tokens : saved?.length ? saved.reduce((n, t) => n + t.ids, 0) : null,
    reward: r?.reward ?? x?.reward ?? null,
    tests: x ? { passed: x.tests.filter((t) => t.passed).length, total: x.tests.length } : null,
    labels,
    drift,
    retries,
    error,
    created: Number.isNaN(started) ? null : started,
    duration: r ? (r.finishedAt ?? now) - r.createdAt : x ? x.timings.total_ms : null,
  };
}

/** What the runs page's query can ask for. */
export interface RunQuery {
  /** Substring of the id, task or harness. */
  q?: string;
  task?: string;
  status?: string;
  /** Rollouts with at least one chain of this label. */
  label?: string;
  /** `yes`: only rollouts with an error; `no`: only those without. */
  error?: string;
  sort?: string;
  dir?: "asc" | "desc";
  /** Rows shown (all are filtered and sorted). */
  limit?: string;
}

export const SORT_KEYS = ["created", "task", "reward", "turns", "tokens", "duration", "status"];

function sortValue(r: RunRow, key: string): number | string {
  switch (key) {
    case "task":
      return r.task ?? "";
    case "reward":
      return r.reward ?? -Infinity;
    case "turns":
      return r.turns?.total ?? -1;
    case "tokens":
      return r.tokens ?? -1;
    case "duration":
      return r.duration ?? -1;
    case "status":
      return r.status;
    default:
      return r.created ?? 0;
  }
}

export function selectRows(rows: RunRow[], q: RunQuery): RunRow[] {
  const needle = q.q?.toLowerCase();
  const kept = rows.filter((r) =>
    (!needle || [r.id, r.task, r.harness].some((s) => s?.toLowerCase().includes(needle))) &&
    (!q.task || r.task === q.task) &&
    (!q.status || r.status === q.status) &&
    (!q.label || (r.labels[q.label] ?? 0) > 0) &&
    (q.error !== "yes" || r.error !== null) &&
    (q.error !== "no" || r.error === null)
  );
  const key = SORT_KEYS.includes(q.sort ?? "") ? q.sort! : "created";
  const sign = (q.dir ?? (key === "task" ? "asc" : "desc")) === "asc" ? 1 : -1;
  return kept.sort((a, b) => {
    const x = sortValue(a, key), y = sortValue(b, key);
    return (x < y ? -1 : x > y ? 1 : 0) * sign;
  });
}

export interface TaskGroup {
  task: string;
  rollouts: number;
  errors: number;
  /** Mean reward over rollouts with a reward and no error. */
  mean: number | null;
  best: number | null;
}

/** Rows grouped by task, tasks in name order. */
export function taskGroups(rows: readonly RunRow[]): TaskGroup[] {
  const groups = new Map<string, RunRow[]>();
  for (const r of rows) {
    if (r.task === null) continue;
    groups.set(r.task, [...(groups.get(r.task) ?? []), r]);
  }
  return [...groups.entries()].sort(([a], [b]) => a < b ? -1 : 1).map(([task, rs]) => {
    const rewards = rs.filter((r) => r.reward !== null && r.status !== "error").map((r) =>
      r.reward!
    );
    return {
      task,
      rollouts: rs.length,
      errors: rs.filter((r) => r.status === "error").length,
      mean: rewards.length ? rewards.reduce((a, b) => a + b, 0) / rewards.length : null,
      best: rewards.length ? Math.max(...rewards) : null,
    };
  });
}
