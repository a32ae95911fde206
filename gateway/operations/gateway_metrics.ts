/**
 * What `/metrics` reports: turns, tokens, the latency the gateway adds, errors by kind (each per
 * backend), requests pending at the gate and in flight over HTTP, finished rollouts and their
 * rewards, the rollouts of each group in memory, and the process itself.
 *
 * @module
 */
import { GenerationError } from "../../generation/mod.ts";
import {
  type EndedTurn,
  type Rollout,
  TurnError,
  type TurnObserver,
} from "../../trajectory/mod.ts";
import { Counter, Gauge, Histogram, type Labels, MetricsRegistry } from "./prometheus.ts";

/** Upper bounds (seconds) of the added-latency buckets: rendering and parsing take milliseconds. */
export const ADDED_LATENCY_BUCKETS = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
] as const;

/** Upper bounds of the reward buckets: most rewards are 0 … 1, some are scores or penalties. */
export const REWARD_BUCKETS = [-1, -0.5, 0, 0.1, 0.25, 0.5, 0.75, 0.9, 1, 2, 5, 10] as const;

/**
 * Groups reported one by one (the most recently created first); the rest are summed in
 * `rollgate_groups`. Bounds the series a scrape returns however many groups a run makes.
 */
export const GROUPS_REPORTED = 100;

/**
 * The `kind` label of a failed turn: the domain's own kind (`render_failed`, `context_exceeded`,
 * `engine_timeout`, `trainer_failed`, `client_gone`, `shutting_down`, …), `upstream_failed` for a
 * hosted API's error, else `internal`.
 */
export function failureKind(ended: EndedTurn): string {
  const e = ended.error;
  if (e instanceof TurnError || e instanceof GenerationError) return e.kind;
  return ended.turn.blackBox ? "upstream_failed" : "internal";
}

/** Live values read at scrape time. */
export interface MetricSources {
  /**
   * Requests at the interception gate not yet resolved by a trainer; a replicated gateway counts
   * its shared queue in the database (the same on every replica), hence the promise.
   */
  pendingRequests(): number | Promise<number>;
  /** The rollouts in memory (their group, status and creation time are read). */
  rollouts(): readonly Pick<Rollout, "group" | "status" | "createdAt">[];
  /** Sample rows the journal found damaged and skipped. */
  damagedSamples(): number;
  /** How agent requests were read (from a known prefix, or whole) and the bytes kept for it. */
  knownPrefixes?(): { fromPrefix: number; whole: number; bytes: number };
}

const startedAt = Date.now() / 1000;

export class GatewayMetrics implements TurnObserver {
  readonly registry = new MetricsRegistry();
  /** `pendingRequests` as read by the last scrape. */
  #pending = 0;
  /** The group counts of the last scrape. */
  #groups: ReturnType<GatewayMetrics["groupCounts"]> = { reported: [], groups: [] };
  #sources: MetricSources | undefined;
  #httpInFlight = 0;
  readonly #turnsInFlight = new Map<string, number>();
  #draining = false;

  readonly turns = this.registry.add(
    new Counter("rollgate_turns_total", "Turns that ended, by backend and outcome (done, failed)."),
  );
  readonly tokensIn = this.registry.add(
    new Counter("rollgate_tokens_in_total", "Prompt tokens of ended turns, by backend."),
  );
  readonly tokensOut = this.registry.add(
    new Counter("rollgate_tokens_out_total", "Sampled tokens of ended turns, by backend."),
  );
  readonly addedLatency = this.registry.add(
    new Histogram(
      "rollgate_added_latency_seconds",
      "Time a turn spent in the gateway outside its backend (render, parse, record), by backend.",
      ADDED_LATENCY_BUCKETS,
    ),
  );
  readonly errors = this.registry.add(
    new Counter("rollgate_errors_total", "Failed turns by backend and kind of failure."),
  );
  readonly responses = this.registry.add(
    new Counter("rollgate_http_responses_total", "HTTP responses by status code."),
  );
  readonly finished = this.registry.add(
    new Counter(
      "rollgate_rollouts_finished_total",
      "Rollouts finished, by whether the trainer gave a reward (set, none).",
    ),
  );
  readonly rewards = this.registry.add(
    new Histogram(
      "rollgate_rollout_reward",
      "Rewards of finished rollouts (those finished with a reward).",
      REWARD_BUCKETS,
    ),
  );

  constructor() {
    const one = (v: number): Iterable<[Labels, number]> => [[{}, v]];
    this.registry.add(
      new Gauge(
        "rollgate_turns_in_flight",
        "Turns started and not yet ended, by backend.",
        () => [...this.#turnsInFlight].map(([backend, n]) => [{ backend }, n]),
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_pending_requests",
        "Requests waiting at the interception gate for a trainer's completion.",
        () => one(this.#pending),
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_http_requests_in_flight",
        "HTTP requests not answered yet (long polls included; a stream counts until its headers).",
        () => one(this.#httpInFlight),
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_active_rollouts",
        "Rollouts that still take turns.",
        () => one((this.#sources?.rollouts() ?? []).filter((r) => r.status === "active").length),
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_group_rollouts",
        `Rollouts in memory per group and status (active, finished), for the ${GROUPS_REPORTED} ` +
          "most recently created groups.",
        () => this.#groups.reported,
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_groups",
        "Groups with rollouts in memory: open (a member still takes turns) or complete.",
        () => this.#groups.groups,
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_journal_damaged_samples",
        "Sample rows the journal could not read back (damaged on disk), skipped by the sample stream.",
        () => one(this.#sources?.damagedSamples() ?? 0),
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_agent_requests_read",
        "Agent requests read since the start, by how: from a known prefix on (only what is new " +
          "parsed) or whole.",
        () => {
          const s = this.#sources?.knownPrefixes?.();
          return s ? [[{ how: "prefix" }, s.fromPrefix], [{ how: "whole" }, s.whole]] : [];
        },
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_known_prefix_bytes",
        "What is kept of agent request bodies (element offsets and prefix digests) to read each " +
          "rollout's next request from where it departs.",
        () => one(this.#sources?.knownPrefixes?.().bytes ?? 0),
      ),
    );
    this.registry.add(
      new Gauge(
        "rollgate_draining",
        "1 while a shutdown drains in-flight turns.",
        () => one(this.#draining ? 1 : 0),
      ),
    );
    this.registry.add(
      new Gauge(
        "process_resident_memory_bytes",
        "Resident memory of the gateway process.",
        () => one(Deno.memoryUsage().rss),
      ),
    );
    this.registry.add(
      new Gauge(
        "process_start_time_seconds",
        "Start of the gateway process, Unix seconds.",
        () => one(startedAt),
      ),
    );
  }

  /** Where the live gauges read from (set once the gateway exists). */
  watch(sources: MetricSources): void {
    this.#sources = sources;
  }

  setDraining(draining: boolean): void {
    this.#draining = draining;
  }

  turnStarted(backend: string): void {
    this.#turnsInFlight.set(backend, (this.#turnsInFlight.get(backend) ?? 0) + 1);
  }

  turnEnded(ended: EndedTurn): void {
    const backend = { backend: ended.backend };
    const { turn } = ended;
    this.#turnsInFlight.set(ended.backend, (this.#turnsInFlight.get(ended.backend) ?? 1) - 1);
    if (ended.error !== undefined) {
      this.turns.inc({ ...backend, outcome: "failed" });
      this.errors.inc({ ...backend, kind: failureKind(ended) });
      return;
    }
    this.turns.inc({ ...backend, outcome: "done" });
    this.tokensIn.inc(backend, turn.promptLength);
    this.tokensOut.inc(backend, turn.outputIds.length);
    this.addedLatency.observe(backend, ended.addedMs / 1000);
  }

  rolloutFinished(rollout: Rollout): void {
    this.finished.inc({ reward: rollout.reward === null ? "none" : "set" });
    if (rollout.reward !== null) this.rewards.observe({}, rollout.reward);
  }

  /** Per group in memory: its members by status; over all of them: open and complete groups. */
  groupCounts(): { reported: [Labels, number][]; groups: [Labels, number][] } {
    const byGroup = new Map<string, { active: number; finished: number; newest: number }>();
    for (const r of this.#sources?.rollouts() ?? []) {
      if (r.group === null) continue;
      const g = byGroup.get(r.group) ?? { active: 0, finished: 0, newest: 0 };
      g[r.status]++;
      g.newest = Math.max(g.newest, r.createdAt);
      byGroup.set(r.group, g);
    }
    const reported = [...byGroup].sort(([, a], [, b]) => b.newest - a.newest)
      .slice(0, GROUPS_REPORTED)
      .flatMap(([group, g]): [Labels, number][] => [
        [{ group, status: "active" }, g.active],
        [{ group, status: "finished" }, g.finished],
      ]);
    let open = 0;
    for (const g of byGroup.values()) if (g.active > 0) open++;
    return {
      reported,
      groups: [[{ state: "open" }, open], [{ state: "complete" }, byGroup.size - open]],
    };
  }

  httpStarted(): void {
    this.#httpInFlight++;
  }

  httpFinished(status: number): void {
    this.#httpInFlight--;
    this.responses.inc({ code: String(status) });
  }

  /**
   * The text format body for `GET /metrics`, with the live values read first. A count the
   * database cannot give now (it is away) reads `NaN`, not a stale or made-up number.
   */
  async scrape(): Promise<string> {
    try {
      this.#pending = await (this.#sources?.pendingRequests() ?? 0);
    } catch {
      this.#pending = NaN;
    }
    this.#groups = this.groupCounts();
    return this.registry.render();
  }
}
