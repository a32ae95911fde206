/**
 * A logged sample's token rows by reference: stored as `{"$rows": plan}` (which turns' rows, see
 * `RowsPlan`) instead of the bytes, and given back as a `TokenRowsRef` on this journal, so the
 * sample log does not hold the rows a second time and streaming a sample reads them then.
 *
 * @module
 */
import { type RowsPlan, type Sample, TokenRowsRef, type TokenRowStore } from "../trajectory/mod.ts";

/** The sample's fields, its rows as their plan. */
export function sampleRowsJson(sample: Sample): Record<string, unknown> {
  const fields = { ...sample } as unknown as Record<string, unknown>;
  if (sample.routed_experts) fields.routed_experts = { $rows: sample.routed_experts.plan };
  return fields;
}

/** A logged sample's fields with its rows' plan read back as a reference on `store`. */
export function withSampleRows(
  fields: Record<string, unknown>,
  store: TokenRowStore,
): Record<string, unknown> {
  const rows = fields.routed_experts as { $rows?: RowsPlan } | undefined;
  if (rows?.$rows) fields.routed_experts = new TokenRowsRef(store, rows.$rows);
  return fields;
}
