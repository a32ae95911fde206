/**
 * Per-position token rows (MoE routing replay) kept apart from the turns: the store that holds
 * each turn's rows, which turns' rows make a sample ({@link rowsOf}, {@link rowsPlan}), and a
 * sample's rows by reference, read from the store only when the sample is written out.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryTokenRowStore } from "./mod.ts";
 * import { decodeTokenRows } from "../../generation/mod.ts";
 *
 * const store = new MemoryTokenRowStore();
 * const rows = decodeTokenRows("routed_experts", { dtype: "uint8", shape: [2, 1, 2], data: "AQIDBA==" }, 2);
 * await store.putRows("rollout-1", "turn-1", "routed_experts", rows);
 * assert.deepEqual([...store.readRows("turn-1", "routed_experts")!], [1, 2, 3, 4]);
 * store.forget("rollout-1");
 * assert.equal(store.readRows("turn-1", "routed_experts"), null);
 * ```
 *
 * @module
 */
export { MemoryTokenRowStore, type TokenRowStore } from "./token_row_store.ts";
export { rowsFromFor, rowsLikeFor, rowsOf, type RowsPlan, rowsPlan } from "./chain_rows.ts";
export { TokenRowsRef } from "./token_rows_ref.ts";
export { type KeptSetsPlan, keptSetsPlan, KeptSetsRef } from "./kept_sets_ref.ts";
