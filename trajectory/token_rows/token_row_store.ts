/**
 * Where turns' token rows (`routed_experts`, ~384 bytes a position for 48 layers × top-8) are
 * kept: in the journal (SQLite), not in memory, and read back when a sample is written out. A
 * gateway without a journal keeps them in a {@link MemoryTokenRowStore} (a throwaway gateway).
 *
 * Rows are keyed by turn id (which carries a random part, so a rollout id used again does not
 * reach an earlier rollout's rows). Reads are synchronous: samples are serialized from them; a
 * store on a shared database (PostgreSQL) reads them into memory first (`loadRows`).
 *
 * @example
 * ```ts
 * import { MemoryTokenRowStore } from "./token_row_store.ts";
 *
 * const store = new MemoryTokenRowStore();
 * await store.putRows("r1", "r1.t0.ab12", "routed_experts", {
 *   dtype: "uint8",
 *   shape: [2, 1, 1],
 *   bytes: new Uint8Array([3, 5]),
 * });
 * store.readRows("r1.t0.ab12", "routed_experts"); // Uint8Array [3, 5]
 * ```
 *
 * @module
 */
import type { TokenRowField, TokenRows } from "../../generation/mod.ts";

export interface TokenRowStore {
  /** Keeps a turn's rows of one field (a turn generated again replaces them). */
  putRows(rollout: string, turn: string, field: TokenRowField, rows: TokenRows): Promise<void>;
  /** A turn's rows of one field as stored, or null when they are gone. */
  readRows(turn: string, field: TokenRowField): Uint8Array | null;
  /**
   * A store that cannot read every turn's rows synchronously (a database replicas share) holds
   * those of `turns` readable until the returned release is called: awaited before samples are
   * written out. Stores without it read any turn's rows at once.
   */
  loadRows?(turns: readonly string[], field: TokenRowField): Promise<() => void>;
}

/** Rows in memory, dropped with their rollout (a gateway without a journal). */
export class MemoryTokenRowStore implements TokenRowStore {
  readonly #rows = new Map<string, { rollout: string; bytes: Uint8Array }>();

  putRows(rollout: string, turn: string, field: TokenRowField, rows: TokenRows): Promise<void> {
    this.#rows.set(`${field}\n${turn}`, { rollout, bytes: rows.bytes });
    return Promise.resolve();
  }

  readRows(turn: string, field: TokenRowField): Uint8Array | null {
    return this.#rows.get(`${field}\n${turn}`)?.bytes ?? null;
  }

  /** Drops a deleted rollout's rows. */
  forget(rollout: string): void {
    for (const [key, v] of this.#rows) if (v.rollout === rollout) this.#rows.delete(key);
  }
}
