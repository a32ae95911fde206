/**
 * What the viewer shows: rollouts (live in a gateway's store, or read back from saved files),
 * their samples, and the rollout runner's result where one exists. Pages read these; nothing
 * here writes to a rollout or waits on a turn.
 *
 * @module
 */
import type { Rollout, RolloutStore, Sample, SampleOptions } from "../trajectory/mod.ts";

/** One test of a graded rollout (the runner's `TestRecord`). */
export interface RunTest {
  id: string;
  kind: string;
  passed: boolean;
  exit_code: number;
  timed_out: boolean;
  duration_ms: number;
  output: string;
}

/** The rollout runner's record of one rollout (a line of `results.jsonl`), as far as shown. */
export interface RunResult {
  rollout_id: string;
  task: string;
  sample: number;
  harness: string;
  reward: number;
  tests: RunTest[];
  diff: string;
  agent: {
    ok: boolean;
    exit_code: number;
    error: string | null;
    final_text: string | null;
    timed_out: boolean;
    duration_ms: number;
  } | null;
  timings: {
    started_at: string;
    agent_ms: number | null;
    eval_ms: number | null;
    total_ms: number;
  };
  samples: unknown[];
  policy: string;
  /** Absent in files written before the runner had `--backend`. */
  backend?: string;
  sandbox: string;
  turns: number;
  eval: { patch_applied: boolean; test_patch_applied: boolean; error: string | null } | null;
  error?: string;
}

/** One rollout as the viewer sees it. */
export interface ViewedRollout {
  id: string;
  /** The recorded turns and chains; null when only a runner result is known. */
  rollout: Rollout | null;
  result: RunResult | null;
  /** The rollout's samples, as the trainer gets (or got) them. */
  samples(): readonly Sample[];
  /** Where the samples come from, said on the pages. */
  samplesNote: string;
}

export interface ViewerSource {
  /** Every rollout, newest first. */
  list(): ViewedRollout[];
  get(id: string): ViewedRollout | undefined;
  /** Rollouts may still change: pages refresh themselves. */
  readonly live: boolean;
}

/** A state key of a rollout: its samples change only when this changes. */
function stateKey(r: Rollout): string {
  let done = 0, failed = 0;
  for (const t of r.turns) {
    if (t.status === "done") done++;
    else if (t.status === "failed") failed++;
  }
  return `${r.turns.length}/${done}/${failed}/${r.status}/${r.reward}/${r.turnRewards?.size ?? 0}`;
}

export interface LiveSourceOptions {
  /** The live rollouts (a `RolloutStore`, or the gateway's `RolloutActions`). */
  store: Pick<RolloutStore, "list" | "get">;
  /** The gateway's sample options (label policy, reward mode, SFT). */
  sampleOptions?: Partial<SampleOptions>;
  /** The rollout runner's results so far (`main.ts rollout`). */
  results?: () => readonly RunResult[];
}

/**
 * The rollouts of a running gateway. Samples are built when a page asks for them and kept until
 * the rollout changes (a turn arrives or settles, the rollout finishes).
 */
export function liveSource(o: LiveSourceOptions): ViewerSource {
  const cache = new WeakMap<Rollout, { key: string; samples: Sample[] }>();
  const samplesOf = (r: Rollout): Sample[] => {
    const key = stateKey(r);
    const hit = cache.get(r);
    if (hit?.key === key) return hit.samples;
    const samples = r.samples(o.sampleOptions);
    cache.set(r, { key, samples });
    return samples;
  };
  const view = (r: Rollout, result: RunResult | null): ViewedRollout => ({
    id: r.id,
    rollout: r,
    result,
    samples: () => samplesOf(r),
    samplesNote: r.status === "finished"
      ? "as the trainer got them at finish"
      : "as they would be if the rollout finished now",
  });
  const results = () => new Map((o.results?.() ?? []).map((x) => [x.rollout_id, x]));
  return {
    live: true,
    list() {
      const byId = results();
      const rows = o.store.list().map((r) => view(r, byId.get(r.id) ?? null));
      const known = new Set(rows.map((r) => r.id));
      for (const x of byId.values()) if (!known.has(x.rollout_id)) rows.push(resultOnly(x));
      return newestFirst(rows);
    },
    get(id) {
      const r = o.store.get(id);
      const x = results().get(id) ?? null;
      return r ? view(r, x) : x ? resultOnly(x) : undefined;
    },
  };
}

/** A runner result whose rollout is not in the store (a saved file, or deleted after an error). */
function resultOnly(x: RunResult): ViewedRollout {
  return {
    id: x.rollout_id,
    rollout: null,
    result: x,
    samples: () => x.samples as Sample[],
    samplesNote: "from the results file",
  };
}

function createdAt(v: ViewedRollout): number {
  if (v.rollout) return v.rollout.createdAt;
  const t = Date.parse(v.result?.timings.started_at ?? "");
  return Number.isNaN(t) ? 0 : t;
}

function newestFirst(rows: ViewedRollout[]): ViewedRollout[] {
  return rows.sort((a, b) => createdAt(b) - createdAt(a));
}

/** A rollout read back from a tree file, with the samples saved beside it when there were any. */
export interface SavedRollout {
  rollout: Rollout;
  samples?: Sample[];
}

/** Saved rollouts and runner results (`main.ts view`); a result joins its rollout by id. */
export function savedSource(
  rollouts: readonly SavedRollout[],
  results: readonly RunResult[],
): ViewerSource {
  const byId = new Map<string, ViewedRollout>();
  for (const x of results) byId.set(x.rollout_id, resultOnly(x));
  for (const { rollout, samples } of rollouts) {
    const result = byId.get(rollout.id)?.result ?? null;
    let built: Sample[] | undefined;
    byId.set(rollout.id, {
      id: rollout.id,
      rollout,
      result,
      samples: () =>
        samples ?? (result?.samples as Sample[] | undefined) ?? (built ??= rollout.samples()),
      samplesNote: samples
        ? "saved with the tree"
        : result
        ? "from the results file"
        : "rebuilt from the tree with the default label policy",
    });
  }
  const rows = newestFirst([...byId.values()]);
  return { live: false, list: () => [...rows], get: (id) => byId.get(id) };
}
