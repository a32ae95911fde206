/**
 * A rollout: one agent run, its identity (id + token), its turns and its message tree.
 *
 * @module
 */
import type { Turn } from "./turn.ts";
import type { Chain, OpenAgentCall } from "./chains/mod.ts";
import { TurnTree } from "./tree/mod.ts";
import {
  buildSamples,
  newestVersion,
  type Sample,
  type SampleOptions,
  type TeacherScore,
} from "./samples/mod.ts";
import { rowsOf, type TokenRowStore } from "./token_rows/mod.ts";
import { teacherName, type TeacherSpec, TOKEN_ROW_FIELDS } from "../generation/mod.ts";

/** Sampling defaults a rollout applies to every turn unless the request says otherwise. */
export interface RolloutSampling {
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
}

export type RolloutStatus = "active" | "finished";

/** One host-side tool call, as recorded. */
export interface HostCall {
  tool: string;
  args: unknown;
  result: unknown;
  /** Milliseconds since the epoch. */
  at: number;
  /** Size of `args` and `result` as JSON. */
  bytes: number;
}

/** The agent's exit signal, as recorded. */
export interface AgentExit {
  exit_code: number | null;
  reason: string | null;
  /** Milliseconds since the epoch. */
  at: number;
}

export class Rollout {
  readonly turns: Turn[] = [];
  readonly tree = new TurnTree();
  readonly chains: Chain[] = [];
  /** Sub-agent tool calls whose result has not reached the parent yet, by call id. */
  readonly openAgentCalls = new Map<string, OpenAgentCall>();
  /** Milliseconds since the epoch (an imported rollout keeps the recorded one). */
  createdAt = Date.now();
  /** Last agent request or trainer call about this rollout (ms since the epoch). */
  lastActivity = this.createdAt;
  status: RolloutStatus = "active";
  /** Host-side tool calls the agent made (`/rollout/:id/v1/tools/:name`). */
  readonly hostCalls: HostCall[] = [];
  /** Bytes of JSON `hostCalls` hold (arguments + results), bounded by the gateway. */
  hostCallBytes = 0;
  /** The agent's exit signal (`/rollout/:id/v1/exit`), once sent. */
  agentExit: AgentExit | null = null;
  finishedAt?: number;
  reward: number | null = null;
  /** GRPO-style group the rollout belongs to (advantages are relative within a group). */
  group: string | null = null;
  /** The weight version staleness is measured against, fixed at finish. */
  referenceVersion: number | null = null;
  /** Where its turns' token rows are kept (set by the store). */
  rows?: TokenRowStore;
  /** Rewards per turn, by turn id (`turn_rewards.ts`); null until the first is posted. */
  turnRewards: Map<string, number> | null = null;
  /** The teacher that scores its turns (on-policy distillation); null: none. */
  teacher: TeacherSpec | null = null;
  /** Each scored (or given up) turn's teacher scoring, by turn id; null until the first. */
  teacherScores: Map<string, TeacherScore> | null = null;

  constructor(
    readonly id: string,
    readonly token: string,
    readonly metadata: Record<string, unknown>,
    readonly sampling: RolloutSampling,
    /** Name of the generation backend for this rollout; default: the gateway's. */
    readonly backend?: string,
    /** Per-rollout overrides of the gateway's sample options (label policy, reward mode, SFT). */
    readonly sampleOptions: Partial<SampleOptions> = {},
    /** Special-token text in content is tokenized as plain text (`RenderOptions`). */
    readonly splitSpecialTokens = false,
    /**
     * The rollout's template settings (`enable_thinking`, `reasoning_effort`, …), merged over the
     * gateway's `--template-kwargs` for every render of this rollout (`PolicyModel.withTemplate`).
     */
    readonly template: Readonly<Record<string, unknown>> = {},
  ) {}

  /** Whether the rollout sets template variables of its own. */
  get hasTemplate(): boolean {
    return Object.keys(this.template).length > 0;
  }

  samples(defaults?: Partial<SampleOptions>): Sample[] {
    // Label actions merge label by label: a rollout setting one keeps the gateway's others.
    const labels = { ...defaults?.labels, ...this.sampleOptions.labels };
    return buildSamples(this, { ...defaults, ...this.sampleOptions, labels });
  }

  /**
   * Makes its turns' token rows readable for writing its samples out, until the returned release
   * is called (a store on a shared database reads them first; others have nothing to do).
   */
  async holdRows(): Promise<() => void> {
    const store = this.rows;
    if (!store?.loadRows) return () => {};
    const releases: (() => void)[] = [];
    const release = () => releases.forEach((r) => r());
    try {
      for (const field of TOKEN_ROW_FIELDS) {
        const turns = this.turns.filter((t) => rowsOf(t, field)).map((t) => t.id);
        if (turns.length > 0) releases.push(await store.loadRows(turns, field));
      }
    } catch (e) {
      release();
      throw e;
    }
    return release;
  }

  /** Marks activity, so the rollout does not expire as idle. */
  touch(): void {
    this.lastActivity = Date.now();
  }

  /**
   * Ends the rollout. `version`: the trainer's weight version now, what staleness is measured
   * against (default: the newest version its turns saw).
   */
  finish(reward: number | null, version: number | null = null): void {
    this.status = "finished";
    this.finishedAt = Date.now();
    this.reward = reward;
    this.referenceVersion = version ?? newestVersion(this.turns);
    // No turn will extend a line again: each gives back what it reserved to grow.
    for (const t of this.turns) t.ids.line.trim();
  }

  /**
   * The summary `GET /api/rollouts/:id` shows; `GET /api/rollouts` lists it without the host
   * calls' arguments and results (`payloads: false`), so a list of many rollouts stays small.
   */
  summary(payloads = true): Record<string, unknown> {
    const count = (s: Turn["status"]) => this.turns.filter((t) => t.status === s).length;
    return {
      id: this.id,
      status: this.status,
      metadata: this.metadata,
      group: this.group,
      sampling: this.sampling,
      backend: this.backend ?? null,
      split_special_tokens: this.splitSpecialTokens,
      ...(this.hasTemplate ? { template: this.template } : {}),
      created_at: this.createdAt,
      finished_at: this.finishedAt ?? null,
      reward: this.reward,
      ...(this.turnRewards ? { turn_rewards: Object.fromEntries(this.turnRewards) } : {}),
      ...(this.teacher ? { teacher: teacherName(this.teacher) } : {}),
      host_calls: payloads
        ? this.hostCalls
        : this.hostCalls.map(({ tool, at, bytes }) => ({ tool, at, bytes })),
      agent_exit: this.agentExit,
      turns: {
        total: this.turns.length,
        done: count("done"),
        pending: count("pending"),
        failed: count("failed"),
      },
    };
  }
}
