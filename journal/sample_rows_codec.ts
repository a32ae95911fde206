/**
 * A logged sample's token rows and kept sets by reference: stored as `{"$rows": plan}` and
 * `{"$kept": plan}` (which turns' rows, see `RowsPlan`, `KeptSetsPlan`) instead of the bytes, and
 * given back as references on this journal, so the sample log does not hold the rows a second
 * time and streaming a sample reads them then.
 *
 * @module
 */
import {
  type KeptSetsPlan,
  KeptSetsRef,
  type RowsPlan,
  type Sample,
  TokenRowsRef,
  type TokenRowStore,
} from "../trajectory/mod.ts";

/** The sample's fields, its rows and kept sets as their plans. */
export function sampleRowsJson(sample: Sample): Record<string, unknown> {
  const fields = { ...sample } as unknown as Record<string, unknown>;
  if (sample.routed_experts) fields.routed_experts = { $rows: sample.routed_experts.plan };
  if (sample.sampling_mask) fields.sampling_mask = { $kept: sample.sampling_mask.plan };
  return fields;
}

/** A logged sample's fields with its plans read back as references on `store`. */
export function withSampleRows(
  fields: Record<string, unknown>,
  store: TokenRowStore,
): Record<string, unknown> {
  const rows = fields.routed_experts as { $rows?: RowsPlan } | undefined;
  if (rows?.$rows) fields.routed_experts = new TokenRowsRef(store, rows.$rows);
  const kept = fields.sampling_mask as { $kept?: KeptSetsPlan } | undefined;
  if (kept?.$kept) fields.sampling_mask = new KeptSetsRef(store, kept.$kept);
  return fields;
}

/** The turns whose stored rows of each field a logged sample's references read. */
export function rowsTurns(fields: Record<string, unknown>): Partial<Record<string, string[]>> {
  const rows = (fields.routed_experts as { $rows?: RowsPlan } | undefined)?.$rows;
  const kept = (fields.sampling_mask as { $kept?: KeptSetsPlan } | undefined)?.$kept;
  return {
    ...(rows ? { [rows.field]: rows.segments.map((s) => s.turn) } : {}),
    ...(kept ? { sampling_mask: kept.segments.map((s) => s.turn) } : {}),
  };
}
