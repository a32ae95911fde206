/**
 * Where token rows lie along a chain. A turn's rows cover positions `from … end − 2` of its
 * sequence (`end` = its prompt + output; its last sampled id is routed by the next call's
 * prefill), and `from` is where its parent's rows ended. So along a sample's path the rows of
 * its turns tile positions `0 … len(input_ids) − 2` exactly, each turn's rows once, when every
 * turn sent them; a turn whose parent has none was asked for rows from 0.
 *
 * @module
 */
import type { RowDtype, TokenRowField } from "../../generation/mod.ts";
import { rowBytes } from "../../generation/mod.ts";
import type { Turn } from "../turn.ts";
import type { RowsMeta } from "../turn_facts.ts";

/** The rows meta of a turn's field, when it has rows. */
export function rowsOf(turn: Turn, field: TokenRowField): RowsMeta | undefined {
  return turn.facts?.rows?.[field];
}

/** Whether a turn's rows of `field` reach the end of its sequence (all but the last id). */
function rowsReachEnd(turn: Turn, field: TokenRowField): boolean {
  const meta = rowsOf(turn, field);
  return meta !== undefined && meta.from + meta.shape[0] === turn.ids.outputEnd - 1;
}

/**
 * How many leading positions of a turn's prompt already have rows of `field` on its chain (what
 * `requests/next` tells the trainer as `routed_experts_from`): where its parent's rows end, or 0.
 */
export function rowsFromFor(turn: Turn, field: TokenRowField): number {
  const parent = turn.parent;
  return parent && rowsReachEnd(parent, field) ? parent.ids.outputEnd - 1 : 0;
}

/** What the chain's earlier rows look like, so a turn's rows keep their dtype and row shape. */
export function rowsLikeFor(
  turn: Turn,
  field: TokenRowField,
): { dtype: RowDtype; shape: number[] } | undefined {
  if (rowsFromFor(turn, field) === 0) return undefined;
  const meta = rowsOf(turn.parent!, field)!;
  return { dtype: meta.dtype, shape: meta.shape };
}

/** One turn's part of a sample's rows. */
export interface RowsSegment {
  turn: string;
  /** The first position the turn's rows cover. */
  from: number;
  /** How many rows. */
  rows: number;
}

/** Which turns' rows make a sample's rows, in order; or why the sample has none. */
export interface RowsPlan {
  field: TokenRowField;
  dtype: RowDtype;
  /** `[len(input_ids) − 1, …row shape]`. */
  shape: number[];
  segments: RowsSegment[];
}

/**
 * The rows of the sample whose path (root first) is `path` and whose `input_ids` has `length`
 * ids: a plan when the path's rows cover positions `0 … length − 2`, else why not (`null` when
 * no turn of the path has rows of `field`).
 */
export function rowsPlan(
  path: readonly Turn[],
  length: number,
  field: TokenRowField,
): RowsPlan | { absent: string } | null {
  if (!path.some((t) => rowsOf(t, field))) return null;
  const segments: RowsSegment[] = [];
  let need = length - 1, i = path.length - 1, first: RowsMeta | undefined;
  while (need > 0) {
    if (i < 0) return { absent: `no turn has ${field} for positions up to ${need - 1}` };
    // The turn whose sequence ends right after position `need` (its last id is routed later).
    while (i > 0 && path[i - 1].ids.outputEnd - 1 >= need) i--;
    const t = path[i];
    const meta = rowsOf(t, field);
    if (!meta || t.ids.outputEnd - 1 !== need || meta.from + meta.shape[0] !== need) {
      return { absent: `turn ${t.id} has no ${field} for positions up to ${need - 1}` };
    }
    first ??= meta;
    if (
      meta.dtype !== first.dtype ||
      rowBytes(meta.dtype, meta.shape) !== rowBytes(first.dtype, first.shape)
    ) {
      return { absent: `turn ${t.id} has ${field} of another dtype or row shape` };
    }
    segments.unshift({ turn: t.id, from: meta.from, rows: meta.shape[0] });
    need = meta.from;
    i--;
  }
  if (!first) return { absent: `the sample has no position to route` };
  return { field, dtype: first.dtype, shape: [length - 1, ...first.shape.slice(1)], segments };
}
