/**
 * Linearizing a rollout's turns into training samples: one per chain of turns, root to leaf.
 *
 * Every sampled id carries loss in one sample at most: a turn is trained only in the sample of its
 * own chain. A fork (`rewrite`, `retry`) shares its parent chain's turns up to the fork as context
 * (loss 0); `trained_from` says where its own part starts. The chain that recorded a prefix first
 * owns it.
 *
 * `input_ids` is the leaf's prompt followed by its output; `loss_mask` is 1 exactly on sampled
 * ids of trained turns of the sample's own chain; `logprobs` is aligned with `input_ids` (0 where
 * nothing was sampled, NaN (JSON `null`) at the sampled ids of a turn whose producer reported no
 * logprobs: never a plausible value, since a 0 is p = 1); `logprobs_absent` names those turns;
 * `sft_mask` marks the content ids of tool outputs, so a trainer can add a loss on predicting the
 * environment (weighted by `sft_weight`).
 *
 * @module
 */
import { teacherName, type TeacherSpec } from "../../generation/mod.ts";
import { teacherFields, type TeacherScore } from "./teacher_logprobs.ts";
import type { Sample } from "./sample.ts";
import type { Turn, TurnImage } from "../turn.ts";
import { type Chain, DEFAULT_LABEL_POLICY, type LabelPolicy } from "../chains/mod.ts";
import {
  isStale,
  newestVersion,
  turnRewardFields,
  type TurnSpan,
  turnSpan,
  versionSpan,
} from "./sample_facts.ts";
import { sampleJson } from "./sample.ts";
import {
  keptSetsPlan,
  KeptSetsRef,
  rowsPlan,
  TokenRowsRef,
  type TokenRowStore,
} from "../token_rows/mod.ts";

export interface SampleOptions {
  labels: Partial<LabelPolicy>;
  /** `full`: every sample carries the rollout's reward; `split`: divided among the samples. */
  rewardMode: "full" | "split";
  /** Weight a trainer should give the SFT loss on tool outputs. */
  sftWeight: number;
  /** Only outputs of these tools get `sft_mask`; undefined = every tool. */
  sftTools?: string[];
  /**
   * Turns more than this many weight versions older than the rollout's reference version at
   * finish are not trained (`stale`); undefined: no bound (see `sample_facts.ts`).
   */
  maxStaleness?: number;
}

export const DEFAULT_SAMPLE_OPTIONS: SampleOptions = {
  labels: {},
  rewardMode: "full",
  sftWeight: 0,
};

/**
 * The leaf of each chain: its deepest finished turn. A chain is a line of turns, so its sample is
 * the path from the rollout's first turn on that path to this leaf.
 */
export function chainLeaves(turns: readonly Turn[]): Turn[] {
  const continued = new Set<Turn>();
  for (const t of turns) {
    if (t.status === "done" && t.parent && t.parent.chain === t.chain) continued.add(t.parent);
  }
  return turns.filter((t) => t.status === "done" && !continued.has(t));
}

/** The turns from the path's first turn to `leaf`, across chains (a fork's shared prefix first). */
export function chainOf(leaf: Turn): Turn[] {
  const chain: Turn[] = [];
  for (let t: Turn | null = leaf; t; t = t.parent) chain.push(t);
  return chain.reverse();
}

/** Names of the tools called, by call id, over a turn's history and answer. */
function toolNames(turn: Turn): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of turn.messages) {
    if (m.role === "assistant") { for (const c of m.tool_calls ?? []) names.set(c.id, c.name); }
  }
  return names;
}

/**
 * The sample of one chain's leaf. Only the leaf's own chain is trained: turns before
 * `trained_from` belong to the chains this one forked from (their samples train them) and are
 * context here. `trained` false masks every turn (label policy `mask`).
 */
export function buildSample(
  leaf: Turn,
  index: number,
  reward: number | null,
  options: SampleOptions,
  trained = true,
  stale: (t: Turn) => boolean = () => false,
): Omit<Sample, "branch" | "chain" | "parent" | "metadata" | "group" | "version_span"> {
  const path = chainOf(leaf);
  const policy = { ...DEFAULT_LABEL_POLICY, ...options.labels };
  const sftTools = options.sftTools ? new Set(options.sftTools) : null;
  const names = sftTools ? toolNames(leaf) : null;
  let total = 0;
  for (const t of path) total += t.bridgeIds.length + t.deltaIds.length + t.outputIds.length;
  // One allocation per array, filled with bulk copies: no per-id pushes (1.6M ids in a big tree).
  const input_ids = new Int32Array(total), loss_mask = new Uint8Array(total);
  const logprobs = new Float64Array(total), sft_mask = new Uint8Array(total);
  let trainedFrom = -1, at = 0;
  const spans: TurnSpan[] = [];
  const images: TurnImage[] = [];
  for (const t of path) {
    const start = at;
    for (const i of t.images) images.push({ ...i, start: start + i.start, end: start + i.end });
    if (t.chain === leaf.chain && trainedFrom < 0) trainedFrom = start;
    input_ids.set(t.bridgeIds, at);
    at += t.bridgeIds.length;
    input_ids.set(t.deltaIds, at);
    at += t.deltaIds.length;
    for (const span of t.toolSpans) {
      if (names && !sftTools!.has(names.get(span.tool_call_id) ?? "")) continue;
      sft_mask.fill(1, start + span.start, start + span.end);
    }
    const old = t.chain === leaf.chain && stale(t);
    const learn = t.chain === leaf.chain && trained && !(t.drift && policy.drift !== "train") &&
      !old;
    spans.push(turnSpan(t, start, at, learn && t.outputIds.length > 0, old));
    input_ids.set(t.outputIds, at);
    if (learn) loss_mask.fill(1, at, at + t.outputIds.length);
    if (t.logprobs) logprobs.set(t.logprobs, at);
    else logprobs.fill(NaN, at, at + t.outputIds.length);
    at += t.outputIds.length;
  }
  const generation = path.reduce(
    (ms, t) =>
      ms +
      ((t.timings.completed ?? t.timings.received) - (t.timings.rendered ?? t.timings.received)),
    0,
  );
  const absent = spans.filter((s) => s.logprobs_absent).map((s) => s.turn);
  return {
    rollout_id: leaf.rolloutId,
    index,
    turns: path.map((t) => t.id),
    trained_from: trainedFrom,
    input_ids,
    loss_mask,
    logprobs,
    sft_mask,
    sft_weight: options.sftWeight,
    reward,
    finish_reason: leaf.finishReason ?? null,
    num_sampled: path.reduce((n, t) => n + t.outputIds.length, 0),
    turn_spans: spans,
    ...(absent.length ? { logprobs_absent: absent } : {}),
    ...(images.length ? { images } : {}),
    timings: {
      started: path[0].timings.received,
      finished: leaf.timings.completed ?? null,
      generation_ms: generation,
    },
  };
}

/**
 * Serialized, a built sample keeps the JSON it always had (typed arrays would otherwise become
 * `{"0": …}` objects); not enumerable, so samples still compare by their fields.
 */
function withJson(sample: Sample): Sample {
  return Object.defineProperty(sample, "toJSON", { value: () => sampleJson(sample) });
}

/** What a rollout's samples are built from (a `Rollout` is one). */
export interface SampleSource {
  readonly turns: readonly Turn[];
  readonly chains: readonly Chain[];
  readonly reward: number | null;
  readonly metadata: Record<string, unknown>;
  readonly group?: string | null;
  /** The version staleness is measured against (set at finish); default: the newest seen. */
  readonly referenceVersion?: number | null;
  /** Where the turns' token rows are kept; none: samples carry no rows. */
  readonly rows?: TokenRowStore;
  /** The rollout's template settings (`Rollout.template`), carried in every sample's metadata. */
  readonly template?: Readonly<Record<string, unknown>>;
  /** Rewards per turn, by turn id (`Rollout.turnRewards`). */
  readonly turnRewards?: ReadonlyMap<string, number> | null;
  /** The teacher scoring its turns, and their scorings (`Rollout.teacher`, `.teacherScores`). */
  readonly teacher?: TeacherSpec | null;
  readonly teacherScores?: ReadonlyMap<string, TeacherScore> | null;
}

/** All samples of a rollout under the label policy; dropped labels give no sample. */
export function buildSamples(
  rollout: SampleSource,
  overrides: Partial<SampleOptions> = {},
): Sample[] {
  const options = { ...DEFAULT_SAMPLE_OPTIONS, ...overrides };
  const policy = { ...DEFAULT_LABEL_POLICY, ...options.labels };
  const leaves = chainLeaves(rollout.turns).filter((t) =>
    policy[rollout.chains[t.chain].label] !== "drop"
  );
  const reward = rollout.reward === null
    ? null
    : options.rewardMode === "split" && leaves.length > 0
    ? rollout.reward / leaves.length
    : rollout.reward;
  const reference = rollout.referenceVersion ?? newestVersion(rollout.turns);
  const stale = (t: Turn) => isStale(t, reference, options.maxStaleness);
  return leaves.map((leaf, i) => {
    const chain = rollout.chains[leaf.chain];
    const trained = policy[chain.label] === "train";
    const base = buildSample(leaf, i, reward, options, trained, stale);
    const path = chainOf(leaf);
    const staleTurns = base.turn_spans.filter((s) => s.stale).map((s) => s.turn);
    const plan = rollout.rows ? rowsPlan(path, base.input_ids.length, "routed_experts") : null;
    const drift = path.filter((t) => t.drift).map((t) => ({ turn: t.id, ...t.drift }));
    const specialText = path.flatMap((t) => t.specialText.map((hit) => ({ turn: t.id, ...hit })));
    const parent = chain.parent === null ? null : {
      chain: chain.parent,
      // A sub-agent's spawning turn, or the last turn a fork shares with its parent chain.
      ...(chain.evidence.parent_turn || chain.evidence.base_turn
        ? { turn: (chain.evidence.parent_turn ?? chain.evidence.base_turn) as string }
        : {}),
      ...(chain.evidence.tool_call_id
        ? { tool_call_id: chain.evidence.tool_call_id as string }
        : {}),
    };
    const rewards = turnRewardFields(base.turn_spans, rollout.turnRewards, base.input_ids.length);
    const kept = rollout.rows
      ? keptSetsPlan(
        path.map((turn, k) => ({ turn, at: base.turn_spans[k].output_start })),
        base.input_ids.length,
      )
      : null;
    const teacher = rollout.teacher && !leaf.blackBox
      ? teacherFields(
        teacherName(rollout.teacher),
        base.turn_spans,
        base.input_ids.length,
        rollout.teacherScores,
      )
      : undefined;
    return withJson({
      ...base,
      ...rewards,
      ...teacher,
      group: rollout.group ?? null,
      version_span: versionSpan(base.turn_spans),
      ...(plan && "segments" in plan
        ? { routed_experts: new TokenRowsRef(rollout.rows!, plan) }
        : {}),
      ...(kept ? { sampling_mask: new KeptSetsRef(rollout.rows!, kept.plan) } : {}),
      ...(kept?.absent.length ? { sampling_mask_absent: kept.absent } : {}),
      branch: chain.label,
      chain: chain.id,
      parent,
      metadata: {
        ...rollout.metadata,
        label_action: policy[chain.label],
        evidence: chain.evidence,
        ...(rollout.template && Object.keys(rollout.template).length
          ? { template: rollout.template }
          : {}),
        ...(drift.length ? { drift } : {}),
        ...(specialText.length ? { special_text: specialText } : {}),
        ...(staleTurns.length
          ? {
            stale_turns: staleTurns,
            max_staleness: options.maxStaleness,
            reference_version: reference,
          }
          : {}),
        ...(plan && "absent" in plan ? { routed_experts_absent: plan.absent } : {}),
      },
      ...(leaf.blackBox
        ? {
          messages: [...leaf.messages, leaf.message!],
          tools: leaf.tools,
          token_ids: false as const,
        }
        : {}),
    });
  });
}
