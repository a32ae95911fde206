/**
 * Checks of the sample fields of issue 24 against the turns they come from, for the property and
 * API tests: per-turn spans (ids, loss, weight versions, sampling facts) aligned with
 * `input_ids`, MoE routing rows aligned position by position (the test doubles route position `p`
 * holding token `t` to experts `expertOf(p, t, layer, k)`, so a row read back at the wrong
 * position or from the wrong turn shows), and the tree and calls forms expanding to the flat
 * samples exactly.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { encodeTokenRows, type TokenRows } from "../../generation/mod.ts";
import {
  type CallsExport,
  chainOf,
  promptIds,
  rowsOf,
  type Sample,
  type TreeExport,
  type Turn,
} from "../../trajectory/mod.ts";

export interface RoutingShape {
  layers: number;
  topK: number;
}

/** The expert the test doubles route position `p` (token `token`) to, at `layer`, `k`-th. */
export function expertOf(p: number, token: number, layer: number, k: number): number {
  return (token * 31 + p * 7 + layer * 3 + k) % 251;
}

/** Rows for positions `from … prompt + output − 2`, uint8, as an engine would send them. */
export function expertRows(
  shape: RoutingShape,
  prompt: ArrayLike<number>,
  output: ArrayLike<number>,
  from: number,
): TokenRows {
  const end = prompt.length + output.length - 1;
  const rows = Math.max(0, end - from);
  const bytes = new Uint8Array(rows * shape.layers * shape.topK);
  let at = 0;
  for (let p = from; p < end; p++) {
    const token = p < prompt.length ? prompt[p] : output[p - prompt.length];
    for (let l = 0; l < shape.layers; l++) {
      for (let k = 0; k < shape.topK; k++) bytes[at++] = expertOf(p, token, l, k);
    }
  }
  return { dtype: "uint8", shape: [rows, shape.layers, shape.topK], bytes };
}

/** Base64 rows as the wire carries them → bytes. */
export function rowBytes(rows: { data: string }): Uint8Array {
  return new Uint8Array(Buffer.from(rows.data, "base64"));
}

/** Checks a routing wire value against `input_ids`: row `p` routes `input_ids[p]` at `p`. */
export function checkRoutingRows(
  rows: { dtype: string; shape: number[]; data: string },
  inputIds: ArrayLike<number>,
  what: string,
): void {
  const [t, layers, topK] = rows.shape;
  assert.equal(rows.dtype, "uint8", what);
  assert.equal(t, inputIds.length - 1, `${what}: one row per position but the last`);
  const bytes = rowBytes(rows);
  assert.equal(bytes.length, t * layers * topK, what);
  for (let p = 0, at = 0; p < t; p++) {
    for (let l = 0; l < layers; l++) {
      for (let k = 0; k < topK; k++, at++) {
        if (bytes[at] !== expertOf(p, inputIds[p], l, k)) {
          assert.fail(`${what}: row ${p} (layer ${l}, k ${k}) is not the routing of position ${p}`);
        }
      }
    }
  }
}

/** Every field of issue 24 of `sample` against the turns of `turns`. */
export function checkSampleFacts(sample: Sample, turns: readonly Turn[], routed: boolean): void {
  const byId = new Map(turns.map((t) => [t.id, t]));
  const leaf = byId.get(sample.turns.at(-1)!)!;
  const path = chainOf(leaf);
  assert.deepEqual(sample.turn_spans.map((s) => s.turn), sample.turns);
  let at = 0;
  const versions: number[] = [];
  sample.turn_spans.forEach((span, k) => {
    const t = path[k];
    assert.equal(span.start, at, `turn ${t.id}: span starts where the previous ended`);
    assert.equal(span.output_start, t.promptLength, `turn ${t.id}: output after its prompt`);
    assert.equal(span.end, t.promptLength + t.outputIds.length);
    assert.deepEqual(
      Array.from(sample.input_ids.subarray(span.output_start, span.end)),
      Array.from(t.outputIds),
    );
    const loss = sample.loss_mask.subarray(span.output_start, span.end);
    assert.equal(span.trained, loss.length > 0 && loss.every((x) => x === 1), `${t.id} trained`);
    if (!span.trained) assert.ok(loss.every((x) => x === 0));
    assert.equal(span.weight_version, t.weightVersion ?? null);
    assert.deepEqual(span.sampling, t.facts?.sampling ?? null);
    const absent = !t.logprobs && t.outputIds.length > 0;
    assert.equal(span.logprobs_absent, absent ? true : undefined, `${t.id} logprobs_absent`);
    for (const [pos, v] of span.weight_versions ?? []) {
      assert.ok(pos >= span.output_start && pos < span.end, "a version run inside the output");
      versions.push(Number(v));
    }
    if (!span.weight_versions && span.weight_version !== null) {
      versions.push(Number(span.weight_version));
    }
    at = span.end;
  });
  assert.equal(at, sample.input_ids.length);
  assert.deepEqual(
    sample.version_span,
    versions.length ? [Math.min(...versions), Math.max(...versions)] : null,
  );
  const covered = routed && sample.input_ids.length > 1 &&
    path.every((t) => rowsOf(t, "routed_experts"));
  assert.equal(sample.routed_experts !== undefined, covered, `sample ${sample.index} rows`);
  if (sample.routed_experts) {
    checkRoutingRows(
      encodeTokenRows(sample.routed_experts.rows()),
      sample.input_ids,
      `sample ${sample.index}`,
    );
  }
}

const nullIfNaN = (x: number) => Number.isNaN(x) ? null : x;

/** The arrays a flat sample has, as plain arrays (what both export forms must give back). */
export function flatArrays(s: Sample) {
  return {
    input_ids: Array.from(s.input_ids),
    loss_mask: Array.from(s.loss_mask),
    logprobs: Array.from(s.logprobs, nullIfNaN),
    sft_mask: Array.from(s.sft_mask),
    routed_experts: s.routed_experts ? s.routed_experts.toJSON() : null,
    ...(s.position_rewards ? { position_rewards: Array.from(s.position_rewards, nullIfNaN) } : {}),
    ...(s.sampling_mask ? { sampling_mask: s.sampling_mask.toJSON() } : {}),
    ...(s.teacher_logprobs ? { teacher_logprobs: Array.from(s.teacher_logprobs, nullIfNaN) } : {}),
  };
}

/** Kept sets `{offsets, ids}` (JSON) as one list of ids per position. */
export function keptSetsList(kept: { offsets: number[]; ids: number[] }): number[][] {
  return kept.offsets.slice(0, -1).map((a, i) => kept.ids.slice(a, kept.offsets[i + 1]));
}

/** One list of ids per position as kept sets `{offsets, ids}` (JSON). */
function keptSetsJoined(sets: number[][]): { offsets: number[]; ids: number[] } {
  const offsets = [0];
  for (const set of sets) offsets.push(offsets.at(-1)! + set.length);
  return { offsets, ids: sets.flat() };
}

function concatRows(parts: { data: string }[], dtype: string, shape: number[]) {
  const bytes = Buffer.concat(parts.map((p) => Buffer.from(p.data, "base64")));
  return { dtype, shape, data: bytes.toString("base64") };
}

/** A tree export (as JSON) expanded into each sample's arrays, by the documented rule. */
// deno-lint-ignore no-explicit-any
export function expandTree(tree: any) {
  // deno-lint-ignore no-explicit-any
  return (tree as TreeExport).samples.map((s: any) => {
    const path = [];
    for (let id = s.leaf; id !== null; id = tree.segments[id].parent) {
      path.unshift(tree.segments[id]);
    }
    const out = { input_ids: [], loss_mask: [], logprobs: [], sft_mask: [] } as Record<
      string,
      number[]
    >;
    const kept: number[][] = [];
    let anyKept = false;
    for (const seg of path) {
      out.input_ids.push(...seg.input_ids);
      const mine = seg.trained_by === s.index;
      out.loss_mask.push(...seg.loss_mask.map((x: number) => mine ? x : 0));
      out.logprobs.push(...seg.logprobs);
      out.sft_mask.push(...seg.sft_mask);
      if (seg.position_rewards) (out.position_rewards ??= []).push(...seg.position_rewards);
      if (seg.teacher_logprobs) {
        (out.teacher_logprobs ??= []).push(
          ...seg.teacher_logprobs.map((lp: number | null) => mine ? lp : null),
        );
      }
      anyKept ||= seg.sampling_mask !== undefined;
      kept.push(
        ...(seg.sampling_mask
          ? keptSetsList(seg.sampling_mask)
          : seg.input_ids.map(() => [] as number[])),
      );
    }
    const rows = s.routed_experts
      ? concatRows(
        s.routed_experts.parts.map((id: number) => tree.segments[id].routed_experts.rows),
        s.routed_experts.dtype,
        s.routed_experts.shape,
      )
      : null;
    const { position_rewards, teacher_logprobs, ...arrays } = out;
    return {
      ...arrays,
      routed_experts: rows,
      ...(position_rewards ? { position_rewards } : {}),
      ...(teacher_logprobs ? { teacher_logprobs } : {}),
      ...(anyKept ? { sampling_mask: keptSetsJoined(kept) } : {}),
    };
  });
}

/** A calls export (as JSON) expanded into each sample's arrays, by the documented rule. */
// deno-lint-ignore no-explicit-any
export function expandCalls(calls: any) {
  // deno-lint-ignore no-explicit-any
  const byTurn = new Map((calls as CallsExport).calls.map((c: any) => [c.turn, c]));
  // deno-lint-ignore no-explicit-any
  return calls.samples.map((s: any) => {
    if (s.token_ids === false) {
      return { input_ids: [], loss_mask: [], logprobs: [], sft_mask: [], routed_experts: null };
    }
    // deno-lint-ignore no-explicit-any
    const leaf: any = byTurn.get(s.turns.at(-1));
    const input_ids = [...leaf.prompt_ids, ...leaf.output_ids];
    const n = input_ids.length;
    const loss_mask = new Array(n).fill(0), logprobs = new Array(n).fill(0);
    const sft_mask = new Array(n).fill(0);
    const rewards = s.turn_rewards ? new Array(n).fill(0) : null;
    const kept: number[][] = input_ids.map(() => []);
    let anyKept = false;
    const teacher = s.teacher ? new Array(n).fill(null) : null;
    for (const turn of s.turns) {
      // deno-lint-ignore no-explicit-any
      const c: any = byTurn.get(turn);
      const start = c.prompt_ids.length;
      c.output_ids.forEach((_: number, i: number) => {
        loss_mask[start + i] = c.trained_by[i] === s.index ? 1 : 0;
        logprobs[start + i] = c.logprobs[i];
        if (teacher && c.trained_by[i] === s.index) teacher[start + i] = c.teacher_logprobs[i];
      });
      for (const [a, b] of c.sft_spans) sft_mask.fill(1, a, b);
      if (rewards && c.output_ids.length) rewards[start + c.output_ids.length - 1] = c.reward;
      if (c.sampling_mask) {
        anyKept = true;
        keptSetsList(c.sampling_mask).forEach((set, i) => kept[start + i] = set);
      }
    }
    const rows = s.routed_experts
      ? concatRows(
        // deno-lint-ignore no-explicit-any
        s.routed_experts.parts.map((t: string) => (byTurn.get(t) as any).routed_experts.rows),
        s.routed_experts.dtype,
        s.routed_experts.shape,
      )
      : null;
    return {
      input_ids,
      loss_mask,
      logprobs,
      sft_mask,
      routed_experts: rows,
      ...(rewards ? { position_rewards: rewards } : {}),
      ...(anyKept ? { sampling_mask: keptSetsJoined(kept) } : {}),
      ...(teacher ? { teacher_logprobs: teacher } : {}),
    };
  });
}

/** The prompt ids of a turn as plain numbers (for comparisons). */
export function promptOf(t: Turn): number[] {
  return Array.from(promptIds(t));
}
