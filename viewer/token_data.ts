/**
 * The token view's data: a range of a sample's (or a turn's) ids with one role per id, the
 * sampled ids' logprobs, each id's text, and marks (turn starts, drift). The role of an id in a
 * sample comes from the sample's own `loss_mask` and `sft_mask`; which ids were sampled comes
 * from the turns the sample is made of.
 *
 * Roles, one letter per id in `kinds`:
 * - `c` prompt context (rendered by the template, or bridged);
 * - `s` tool output inside the context, under the SFT mask (`sft_mask` 1);
 * - `t` sampled by the policy and trained (`loss_mask` 1);
 * - `m` sampled, loss 0 here (masked by the label policy, trained in another sample, or in no
 *   sample);
 * - `x` loss 1 on an id the policy did not sample: a broken sample, shown so it is seen.
 *
 * @module
 */
import type { Rollout, Sample, Turn } from "../trajectory/mod.ts";
import type { TokenText } from "./token_text.ts";

export type TokenMark =
  | { at: number; kind: "turn"; turn: string; index: number; part: "context" | "output" }
  | { at: number; kind: "drift"; turn: string; index: number; sampled: string; rendered: string };

/** What the page script renders: ids `[from, to)` of `total`. */
export interface TokenData {
  from: number;
  to: number;
  total: number;
  ids: number[];
  kinds: string;
  /** Logprobs of the sampled ids in the range, in order; null where the producer gave none. */
  logprobs: (number | null)[];
  /** Each distinct id's text. */
  vocab: Record<number, string>;
  /** Text shown at a position instead of its id's own (characters split over tokens). */
  joins: Record<number, string>;
  marks: TokenMark[];
  /** False when the sample's turns are unknown: masked sampled ids then look like context. */
  sampledKnown: boolean;
}

/** Where one turn's ids sit in a sample. */
export interface TurnSegment {
  turn: Turn;
  /** First id the turn added (bridge, then rendered delta). */
  start: number;
  /** First sampled id. */
  output: number;
  end: number;
}

/** The sample's turns laid out over its ids; null when they do not add up to its length. */
export function sampleSegments(sample: Sample, rollout: Rollout | null): TurnSegment[] | null {
  if (!rollout) return null;
  const byId = new Map(rollout.turns.map((t) => [t.id, t]));
  const segments: TurnSegment[] = [];
  let at = 0;
  for (const id of sample.turns) {
    const turn = byId.get(id);
    if (!turn) return null;
    const output = at + turn.bridgeIds.length + turn.deltaIds.length;
    const end = output + turn.outputIds.length;
    segments.push({ turn, start: at, output, end });
    at = end;
  }
  return at === sample.input_ids.length ? segments : null;
}

/** Counts of each role over a whole sample. */
export type RoleCounts = Record<"c" | "s" | "t" | "m" | "x", number>;

interface Layout {
  segments: TurnSegment[] | null;
  /** 1 on sampled ids (all zeros when unknown). */
  sampled: Uint8Array;
  counts: RoleCounts;
}

const layouts = new WeakMap<Sample, Layout>();

function kindOf(sample: Sample, sampled: Uint8Array, i: number): keyof RoleCounts {
  const loss = sample.loss_mask[i] === 1;
  if (sampled[i]) return loss ? "t" : "m";
  if (loss) return "x";
  return sample.sft_mask?.[i] === 1 ? "s" : "c";
}

/** The sample's layout, computed once per sample object. */
export function sampleLayout(sample: Sample, rollout: Rollout | null): Layout {
  let layout = layouts.get(sample);
  if (layout) return layout;
  const segments = sampleSegments(sample, rollout);
  const sampled = new Uint8Array(sample.input_ids.length);
  for (const s of segments ?? []) sampled.fill(1, s.output, s.end);
  const counts: RoleCounts = { c: 0, s: 0, t: 0, m: 0, x: 0 };
  if (segments) {
    for (let i = 0; i < sampled.length; i++) counts[kindOf(sample, sampled, i)]++;
  } else {
    // Without the turns, ids with loss are taken as sampled (there is nothing else to go by).
    for (let i = 0; i < sampled.length; i++) {
      if (sample.loss_mask[i] === 1) sampled[i] = 1;
      counts[kindOf(sample, sampled, i)]++;
    }
  }
  layout = { segments, sampled, counts };
  layouts.set(sample, layout);
  return layout;
}

/** A logprob for the page; `null` when none was reported (NaN in a sample). */
function rounded(lp: number): number | null {
  return Number.isNaN(lp) ? null : Math.round(lp * 1e4) / 1e4;
}

async function pieces(
  text: TokenText,
  ids: ArrayLike<number>,
  from: number,
  to: number,
): Promise<Pick<TokenData, "vocab" | "joins">> {
  const { vocab, joins } = await text.describe(ids, from, to);
  return { vocab: Object.fromEntries(vocab), joins: Object.fromEntries(joins) };
}

async function driftMark(text: TokenText, turn: Turn, at: number): Promise<TokenMark> {
  return {
    at: at + turn.drift!.position,
    kind: "drift",
    turn: turn.id,
    index: turn.index,
    sampled: await text.decode(turn.drift!.sampled),
    rendered: await text.decode(turn.drift!.rendered),
  };
}

/** Ids `[from, to)` of a sample (clamped to its length). */
export async function sampleTokens(
  text: TokenText,
  sample: Sample,
  rollout: Rollout | null,
  from: number,
  to: number,
): Promise<TokenData> {
  const total = sample.input_ids.length;
  from = Math.max(0, Math.min(from, total));
  to = Math.max(from, Math.min(to, total));
  const { segments, sampled } = sampleLayout(sample, rollout);
  let kinds = "";
  const logprobs: (number | null)[] = [];
  const noLogprobs = new Set(segments?.filter((s) => !s.turn.logprobs).map((s) => s.turn));
  let segment = 0;
  for (let i = from; i < to; i++) {
    kinds += kindOf(sample, sampled, i);
    if (!sampled[i]) continue;
    while (segments && segments[segment].end <= i) segment++;
    logprobs.push(
      segments && noLogprobs.has(segments[segment].turn) ? null : rounded(sample.logprobs[i]),
    );
  }
  const marks: TokenMark[] = [];
  for (const s of segments ?? []) {
    if (s.start < to && s.end > from) {
      marks.push({
        at: s.start,
        kind: "turn",
        turn: s.turn.id,
        index: s.turn.index,
        part: "context",
      });
      marks.push({
        at: s.output,
        kind: "turn",
        turn: s.turn.id,
        index: s.turn.index,
        part: "output",
      });
    }
    if (s.turn.drift) marks.push(await driftMark(text, s.turn, s.output));
  }
  return {
    from,
    to,
    total,
    ids: Array.from(sample.input_ids.slice(from, to)),
    kinds,
    logprobs,
    ...(await pieces(text, sample.input_ids, from, to)),
    marks,
    sampledKnown: segments !== null,
  };
}

/**
 * Ids `[from, to)` of what one turn added (bridge, rendered delta) and sampled, for a turn in no
 * sample: its sampled ids carry no loss.
 */
export async function turnTokens(
  text: TokenText,
  turn: Turn,
  from: number,
  to: number,
): Promise<TokenData> {
  const ids = [...turn.bridgeIds, ...turn.deltaIds, ...turn.outputIds];
  const output = ids.length - turn.outputIds.length;
  from = Math.max(0, Math.min(from, ids.length));
  to = Math.max(from, Math.min(to, ids.length));
  const sft = new Uint8Array(output);
  for (const span of turn.toolSpans) sft.fill(1, span.start, span.end);
  let kinds = "";
  const logprobs: (number | null)[] = [];
  for (let i = from; i < to; i++) {
    if (i < output) kinds += sft[i] ? "s" : "c";
    else {
      kinds += "m";
      const lp = turn.logprobs?.[i - output];
      logprobs.push(lp === undefined ? null : rounded(lp));
    }
  }
  const marks: TokenMark[] = [
    { at: 0, kind: "turn", turn: turn.id, index: turn.index, part: "context" },
    { at: output, kind: "turn", turn: turn.id, index: turn.index, part: "output" },
  ];
  if (turn.drift) marks.push(await driftMark(text, turn, output));
  return {
    from,
    to,
    total: ids.length,
    ids: ids.slice(from, to),
    kinds,
    logprobs,
    ...(await pieces(text, ids, from, to)),
    marks,
    sampledKnown: true,
  };
}
