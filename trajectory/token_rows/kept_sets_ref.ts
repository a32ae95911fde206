/**
 * A sample's kept-token sets (`sampling_mask`) by reference, read from the {@link TokenRowStore}
 * only when the sample is written out, as `{offsets, ids}` aligned with `input_ids`: the kept set
 * of position `i` is `ids[offsets[i] … offsets[i + 1])`, empty where nothing was sampled (prompt,
 * tool output, bridge) or the turn sent none. Each turn's stored rows cover its sampled ids, in
 * order; along a path they lie at its turns' output spans, so a bridged turn's sets stay on its
 * own ids as routing rows do. Compact: 4 bytes a kept id and 4 a position, nothing per pad.
 *
 * @module
 */
import { KEPT_ID_PAD, type TokenRowField } from "../../generation/mod.ts";
import type { Turn } from "../turn.ts";
import { rowsOf } from "./chain_rows.ts";
import type { TokenRowStore } from "./token_row_store.ts";
import { TokenRowsGoneError } from "./token_rows_ref.ts";

const FIELD: TokenRowField = "sampling_mask";

/** Which turns' stored sets lie where: `at` is the position of a turn's first sampled id. */
export interface KeptSetsPlan {
  /** Positions the sets are aligned with (`len(input_ids)`, or a segment's or call's). */
  length: number;
  segments: { turn: string; at: number; rows: number; width: number }[];
}

/** Kept sets as a trainer reads them: position `i`'s set is `ids[offsets[i] … offsets[i+1])`. */
export interface KeptSets {
  offsets: Int32Array;
  ids: Int32Array;
}

/**
 * The plan of the turns `outputs` (each with where its first sampled id lies) over `length`
 * positions, and the turns among them that sampled ids without kept sets; `null` when none of
 * them has kept sets.
 */
export function keptSetsPlan(
  outputs: readonly { turn: Turn; at: number }[],
  length: number,
): { plan: KeptSetsPlan; absent: string[] } | null {
  const plan: KeptSetsPlan = { length, segments: [] };
  const absent: string[] = [];
  for (const { turn, at } of outputs) {
    const meta = rowsOf(turn, FIELD);
    if (meta) plan.segments.push({ turn: turn.id, at, rows: meta.shape[0], width: meta.shape[2] });
    else if (turn.outputIds.length > 0) absent.push(turn.id);
  }
  return plan.segments.length ? { plan, absent } : null;
}

export class KeptSetsRef {
  constructor(readonly store: TokenRowStore, readonly plan: KeptSetsPlan) {}

  /** The sets, read from the store; a {@link TokenRowsGoneError} when a turn's are gone. */
  sets(): KeptSets {
    const counts = new Int32Array(this.plan.length);
    const rows: { at: number; view: DataView; width: number; n: number }[] = [];
    let total = 0;
    for (const seg of this.plan.segments) {
      const bytes = this.store.readRows(seg.turn, FIELD);
      if (!bytes || bytes.byteLength < seg.rows * seg.width * 4) {
        throw new TokenRowsGoneError(`the ${FIELD} of turn ${seg.turn} are no longer stored`);
      }
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const n = seg.rows;
      for (let r = 0; r < n; r++) {
        let k = 0;
        while (k < seg.width && view.getInt32((r * seg.width + k) * 4, true) !== KEPT_ID_PAD) k++;
        counts[seg.at + r] = k;
        total += k;
      }
      rows.push({ at: seg.at, view, width: seg.width, n });
    }
    const offsets = new Int32Array(this.plan.length + 1);
    for (let i = 0; i < this.plan.length; i++) offsets[i + 1] = offsets[i] + counts[i];
    const ids = new Int32Array(total);
    for (const { at, view, width, n } of rows) {
      for (let r = 0; r < n; r++) {
        const start = offsets[at + r];
        for (let k = 0; k < counts[at + r]; k++) {
          ids[start + k] = view.getInt32((r * width + k) * 4, true);
        }
      }
    }
    return { offsets, ids };
  }

  /** The sets, or `null` when the rows are no longer stored (as for routing rows). */
  setsOrNull(): KeptSets | null {
    try {
      return this.sets();
    } catch (e) {
      if (e instanceof TokenRowsGoneError) return null;
      throw e;
    }
  }

  /** `{offsets, ids}` as JSON arrays (the base64 transport encodes `setsOrNull()` itself). */
  toJSON(): { offsets: number[]; ids: number[] } | null {
    const sets = this.setsOrNull();
    return sets && { offsets: Array.from(sets.offsets), ids: Array.from(sets.ids) };
  }
}
