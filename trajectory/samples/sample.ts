/**
 * What a sample is: one chain of a rollout as a training row, its id arrays typed in process
 * (`Int32Array` ids, `Uint8Array` masks, `Float64Array` logprobs and per-position values), and
 * the JSON it is written as (`sampleJson`: plain arrays, NaN as `null`).
 *
 * @module
 */
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import type { BranchLabel } from "../chains/mod.ts";
import type { KeptSetsRef, TokenRowsRef } from "../token_rows/mod.ts";
import type { TurnSpan } from "./sample_facts.ts";
import type { TeacherMissing } from "./teacher_logprobs.ts";
import type { TurnImage } from "../turn.ts";

export interface Sample {
  rollout_id: string;
  /** The rollout's group (`POST /api/rollouts` `group`): advantages are relative within it. */
  group: string | null;
  index: number;
  branch: BranchLabel;
  chain: number;
  /**
   * The chain this one hangs off: a sub-agent's spawning chain (with the turn and tool call), a
   * compaction's replaced chain, a fork's (`rewrite`, `retry`) parent chain with the last turn
   * they share.
   */
  parent: { chain: number; turn?: string; tool_call_id?: string } | null;
  /** Turn ids from root to leaf. */
  turns: string[];
  /**
   * Index in `input_ids` where this sample's own chain starts. Ids before it are a prefix shared
   * with the chain this one forked from (`parent`; label `rewrite` or `retry`), whose sample
   * trains it: here it is context (loss 0). 0 for chains that start from a full render.
   */
  trained_from: number;
  /** Typed arrays in process; plain JSON arrays on the wire (see `sampleJson`). */
  input_ids: Int32Array;
  loss_mask: Uint8Array;
  /** NaN at the sampled ids of the turns in {@link Sample.logprobs_absent} (JSON `null`). */
  logprobs: Float64Array;
  sft_mask: Uint8Array;
  sft_weight: number;
  /**
   * The turns of the path whose sampled ids have no logprob (their producer reported none: a
   * trainer's `complete` without `logprobs`, an engine that sent none); only when there are some.
   */
  logprobs_absent?: string[];
  reward: number | null;
  /**
   * Only when some turn of the rollout has a reward of its own: one per `turn_spans` entry
   * (`null`: none posted), see `turnRewardFields`.
   */
  turn_rewards?: (number | null)[];
  /** With `turn_rewards`: each turn's reward at its last sampled id, aligned with `input_ids`. */
  position_rewards?: Float64Array;
  finish_reason: string | null;
  /** Ids sampled by the policy in this sample (trained or not). */
  num_sampled: number;
  /** Each turn of the path: where its ids lie, loss, weight versions, sampling facts. */
  turn_spans: TurnSpan[];
  /**
   * The images the sample shows, in order: where each one's pad tokens lie in `input_ids`
   * (half-open), its sha256 (`GET /api/images/:hash` gives the bytes), type and size. Absent when
   * it shows none.
   */
  images?: TurnImage[];
  /** `[oldest, newest]` weight version of the sample's turns; null when none was reported. */
  version_span: [string | number, string | number] | null;
  /**
   * MoE routing of positions `0 … len(input_ids) − 2` (`[T, layers, top_k]`, base64 on the
   * wire), when every position is covered; read from the journal when written out.
   */
  routed_experts?: TokenRowsRef;
  /**
   * Kept-token sets (`{offsets, ids}` on the wire, aligned with `input_ids`: a sampler's kept
   * set at each sampled position), when some turn of the path has them; read from the journal
   * when written out.
   */
  sampling_mask?: KeptSetsRef;
  /** With `sampling_mask`: the path's turns that sampled ids without kept sets (theirs empty). */
  sampling_mask_absent?: string[];
  /** The rollout's teacher (on-policy distillation), when it has one. */
  teacher?: string;
  /**
   * With `teacher`: aligned with `input_ids`, its logprob of the sampled id at every trained
   * position, NaN (JSON `null`) elsewhere and where it gave none (`teacher_missing`).
   */
  teacher_logprobs?: Float64Array;
  /** Trained turns without teacher scores: their positions and why (`teacher_logprobs.ts`). */
  teacher_missing?: TeacherMissing[];
  timings: { started: number; finished: number | null; generation_ms: number };
  metadata: Record<string, unknown>;
  /** Black-box rollouts only: the message-level trajectory (their id arrays are empty). */
  messages?: Message[];
  tools?: ToolSpec[];
  token_ids?: false;
}

/** A sample as JSON arrays: what clients receive unless they ask for a compact encoding. */
export type SampleJson =
  & Omit<
    Sample,
    "input_ids" | "loss_mask" | "logprobs" | "sft_mask" | "position_rewards" | "teacher_logprobs"
  >
  & {
    input_ids: number[];
    loss_mask: number[];
    /** `null` where the sample's `logprobs` is NaN (no logprob was reported). */
    logprobs: (number | null)[];
    sft_mask: number[];
    position_rewards?: (number | null)[];
    teacher_logprobs?: (number | null)[];
  };

/** Numbers as JSON has them: NaN (not reported) as `null`. */
export function jsonNumbers(values: Float64Array): (number | null)[] {
  return Array.from(values, (x) => Number.isNaN(x) ? null : x);
}

/** `sample` with plain arrays (what `JSON.stringify` writes for a built sample). */
export function sampleJson(sample: Sample): SampleJson {
  const { position_rewards, teacher_logprobs, ...rest } = sample;
  return {
    ...rest,
    input_ids: Array.from(sample.input_ids),
    loss_mask: Array.from(sample.loss_mask),
    logprobs: jsonNumbers(sample.logprobs),
    sft_mask: Array.from(sample.sft_mask),
    ...(position_rewards ? { position_rewards: jsonNumbers(position_rewards) } : {}),
    ...(teacher_logprobs ? { teacher_logprobs: jsonNumbers(teacher_logprobs) } : {}),
  };
}
