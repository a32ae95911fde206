/**
 * Two more forms of a rollout's samples, for trainers that train shared prefixes once:
 *
 * - `tree`: every turn's ids once, as segments with a parent (root first), each with its loss
 *   mask (as the sample that trains it has it, `trained_by`; 0 in every other sample), logprobs
 *   (NaN, JSON `null`, where the turn reported none, as in the flat sample), SFT mask and token
 *   rows. A sample is its leaf segment: expanding the path from the root gives
 *   its flat `input_ids`, `loss_mask`, `logprobs`, `sft_mask` and `routed_experts` exactly.
 * - `calls`: every LLM call as the engine saw it: prompt ids, generated ids and, per generated
 *   id, the sample that trains it (−1: none); its tool-output spans and rows (NeMo RL's exact-call
 *   trees read this).
 *
 * Both are derived from the flat samples (the one place loss is decided), so they cannot
 * disagree with them; a sample's other fields come along unchanged.
 *
 * @module
 */
import type { Sample } from "./sample.ts";
import type { Turn, TurnImage } from "../turn.ts";
import { promptIds } from "../turn.ts";
import {
  keptSetsPlan,
  KeptSetsRef,
  rowsOf,
  TokenRowsRef,
  type TokenRowStore,
} from "../token_rows/mod.ts";

/** A sample without its arrays: what both forms keep of it. */
export type SampleHead = Omit<
  Sample,
  | "input_ids"
  | "loss_mask"
  | "logprobs"
  | "sft_mask"
  | "routed_experts"
  | "position_rewards"
  | "sampling_mask"
  | "teacher_logprobs"
>;

/** One turn's own ids (bridge, delta, output) in the tree form. */
export interface TreeSegment {
  id: number;
  parent: number | null;
  turn: string;
  chain: number;
  /** Position of its first id in every sample that contains it. */
  start: number;
  input_ids: Int32Array;
  loss_mask: Uint8Array;
  logprobs: Float64Array;
  sft_mask: Uint8Array;
  /** The sample whose loss it carries; null when no sample trains it. */
  trained_by: number | null;
  routed_experts?: SegmentRows;
  /** When the rollout has rewards per turn: the turn's reward at its last sampled id. */
  position_rewards?: Float64Array;
  /** The turn's kept sets over the segment's positions, when it has them. */
  sampling_mask?: KeptSetsRef;
  /** With a teacher: as the sample that trains it has them (NaN when none trains it). */
  teacher_logprobs?: Float64Array;
}

/** A segment's or call's own rows: positions `from … from + shape[0] − 1`. */
export interface SegmentRows {
  from: number;
  rows: TokenRowsRef;
}

/** How a sample's rows are made in the export forms: these segments' (or calls') rows in order. */
export interface ExportedRows {
  dtype: string;
  shape: number[];
  parts: (number | string)[];
}

export interface TreeExport {
  rollout_id: string;
  group: string | null;
  form: "tree";
  segments: TreeSegment[];
  samples: (SampleHead & { leaf: number | null; routed_experts?: ExportedRows })[];
}

export interface CallExport {
  turn: string;
  parent: string | null;
  chain: number;
  prompt_ids: Int32Array;
  output_ids: Int32Array;
  logprobs: Float64Array;
  /** Per output id: the sample that trains it, −1 when none. */
  trained_by: Int32Array;
  /** `[start, end)` positions of tool-output ids this call's prompt added (SFT mask). */
  sft_spans: [number, number][];
  /** The images this call's prompt added, positioned in `prompt_ids` (absent: none). */
  images?: TurnImage[];
  weight_version: string | number | null;
  /** The version the completion reported, when it reported one. */
  completion_version?: string | number;
  routed_experts?: SegmentRows;
  /** When the rollout has rewards per turn: this call's (`null`: none posted). */
  reward?: number | null;
  /** The call's kept sets over its output ids, when it has them. */
  sampling_mask?: KeptSetsRef;
  /** With a teacher: its logprob of each output id the call's training sample trains, else NaN. */
  teacher_logprobs?: Float64Array;
}

export interface CallsExport {
  rollout_id: string;
  group: string | null;
  form: "calls";
  calls: CallExport[];
  samples: (SampleHead & { routed_experts?: ExportedRows })[];
}

function headOf(sample: Sample): SampleHead {
  const {
    input_ids: _i,
    loss_mask: _l,
    logprobs: _p,
    sft_mask: _s,
    routed_experts: _r,
    position_rewards: _w,
    sampling_mask: _k,
    teacher_logprobs: _t,
    ...head
  } = sample;
  return head;
}

/** A turn's own rows as a reference on the store (one segment: the whole turn). */
function ownRows(t: Turn, store: TokenRowStore | undefined): SegmentRows | undefined {
  const meta = rowsOf(t, "routed_experts");
  if (!meta || !store) return undefined;
  const plan = {
    field: "routed_experts" as const,
    dtype: meta.dtype,
    shape: meta.shape,
    segments: [{ turn: t.id, from: meta.from, rows: meta.shape[0] }],
  };
  return { from: meta.from, rows: new TokenRowsRef(store, plan) };
}

/** A turn's own kept sets over `length` positions, its first sampled id at `at`. */
function ownKeptSets(t: Turn, at: number, length: number, store: TokenRowStore | undefined) {
  const kept = store ? keptSetsPlan([{ turn: t, at }], length) : null;
  return kept ? { sampling_mask: new KeptSetsRef(store!, kept.plan) } : {};
}

/** The turns of the samples, each once, parents first, with the sample that trains each. */
function turnsOf(samples: readonly Sample[], byId: Map<string, Turn>) {
  const seen = new Map<string, { turn: Turn; owner: Sample | null; any: Sample; span: number }>();
  for (const s of samples) {
    s.turn_spans.forEach((span, k) => {
      const entry = seen.get(span.turn);
      const owns = span.chain === s.chain;
      if (!entry) {
        seen.set(span.turn, {
          turn: byId.get(span.turn)!,
          owner: owns ? s : null,
          any: s,
          span: k,
        });
      } else if (owns) entry.owner = s;
    });
  }
  return [...seen.values()].sort((a, b) => a.turn.ids.outputEnd - b.turn.ids.outputEnd);
}

/** Whether a turn trains in its chain's sample, and where. */
function spanIn(sample: Sample, turn: string) {
  return sample.turn_spans.find((s) => s.turn === turn)!;
}

function exportedRows(sample: Sample, part: (turn: string) => number | string) {
  const rows = sample.routed_experts;
  if (!rows) return {};
  const plan = rows.plan;
  return {
    routed_experts: {
      dtype: plan.dtype,
      shape: plan.shape,
      parts: plan.segments.map((seg) => part(seg.turn)),
    },
  };
}

/** The tree form of `samples` (built from `turns`, whose rows are in `store`). */
export function treeExport(
  rolloutId: string,
  group: string | null,
  turns: readonly Turn[],
  samples: readonly Sample[],
  store?: TokenRowStore,
): TreeExport {
  const byId = new Map(turns.map((t) => [t.id, t]));
  const segments: TreeSegment[] = [];
  const segmentOf = new Map<string, number>();
  for (const { turn, owner, any } of turnsOf(samples, byId)) {
    const source = owner ?? any;
    const span = spanIn(source, turn.id);
    const end = span.end;
    const parent = turn.parent ? segmentOf.get(turn.parent.id) ?? null : null;
    const seg: TreeSegment = {
      id: segments.length,
      parent,
      turn: turn.id,
      chain: turn.chain,
      start: span.start,
      input_ids: source.input_ids.subarray(span.start, end),
      loss_mask: owner
        ? source.loss_mask.subarray(span.start, end)
        : new Uint8Array(end - span.start),
      logprobs: source.logprobs.subarray(span.start, end),
      sft_mask: source.sft_mask.subarray(span.start, end),
      trained_by: owner ? owner.index : null,
    };
    const rows = ownRows(turn, store);
    if (rows) seg.routed_experts = rows;
    if (source.position_rewards) {
      seg.position_rewards = source.position_rewards.subarray(span.start, end);
    }
    Object.assign(seg, ownKeptSets(turn, span.output_start - span.start, end - span.start, store));
    if (source.teacher_logprobs) {
      seg.teacher_logprobs = owner
        ? owner.teacher_logprobs!.subarray(span.start, end)
        : new Float64Array(end - span.start).fill(NaN);
    }
    segmentOf.set(turn.id, seg.id);
    segments.push(seg);
  }
  return {
    rollout_id: rolloutId,
    group,
    form: "tree",
    segments,
    samples: samples.map((s) => ({
      ...headOf(s),
      leaf: s.turns.length && !s.token_ids ? segmentOf.get(s.turns.at(-1)!) ?? null : null,
      ...exportedRows(s, (turn) => segmentOf.get(turn)!),
    })),
  };
}

/** The calls form of `samples`: one entry per LLM call (turn) they contain. */
export function callsExport(
  rolloutId: string,
  group: string | null,
  turns: readonly Turn[],
  samples: readonly Sample[],
  store?: TokenRowStore,
): CallsExport {
  const byId = new Map(turns.map((t) => [t.id, t]));
  const calls: CallExport[] = [];
  for (const { turn, owner, any } of turnsOf(samples, byId)) {
    const source = owner ?? any;
    const span = spanIn(source, turn.id);
    const trainedBy = new Int32Array(span.end - span.output_start).fill(-1);
    if (owner) {
      const loss = owner.loss_mask.subarray(span.output_start, span.end);
      loss.forEach((l, i) => l && (trainedBy[i] = owner.index));
    }
    const sft: [number, number][] = [];
    for (let i = span.start; i < span.output_start; i++) {
      if (!source.sft_mask[i]) continue;
      const start = i;
      while (i < span.output_start && source.sft_mask[i]) i++;
      sft.push([start, i]);
    }
    const call: CallExport = {
      turn: turn.id,
      parent: turn.parent?.id ?? null,
      chain: turn.chain,
      prompt_ids: promptIds(turn),
      output_ids: turn.outputIds,
      logprobs: source.logprobs.subarray(span.output_start, span.end),
      trained_by: trainedBy,
      sft_spans: sft,
      weight_version: turn.weightVersion ?? null,
      ...(span.completion_version !== undefined
        ? { completion_version: span.completion_version }
        : {}),
    };
    const images = (source.images ?? []).filter((i) =>
      i.start >= span.start && i.start < span.output_start
    );
    if (images.length) call.images = images;
    const rows = ownRows(turn, store);
    if (rows) call.routed_experts = rows;
    if (source.turn_rewards) call.reward = span.reward ?? null;
    Object.assign(call, ownKeptSets(turn, 0, turn.outputIds.length, store));
    if (source.teacher_logprobs) {
      call.teacher_logprobs = owner
        ? owner.teacher_logprobs!.subarray(span.output_start, span.end)
        : new Float64Array(span.end - span.output_start).fill(NaN);
    }
    calls.push(call);
  }
  return {
    rollout_id: rolloutId,
    group,
    form: "calls",
    calls,
    samples: samples.map((s) => ({ ...headOf(s), ...exportedRows(s, (turn) => turn) })),
  };
}
