/**
 * A sample's token rows by reference: which turns' stored rows make them ({@link RowsPlan}), read
 * from the {@link TokenRowStore} only when the sample is written out (its JSON, a stream, an
 * export), so a built or logged sample holds a few numbers, not ~384 bytes a position.
 *
 * @module
 */
import {
  encodeTokenRows,
  rowBytes,
  type TokenRows,
  type TokenRowsWire,
} from "../../generation/mod.ts";
import type { RowsPlan } from "./chain_rows.ts";
import type { TokenRowStore } from "./token_row_store.ts";

/** The rows of a sample could not be read back (the store lost them). */
export class TokenRowsGoneError extends Error {
  override name = "TokenRowsGoneError";
}

export class TokenRowsRef {
  constructor(readonly store: TokenRowStore, readonly plan: RowsPlan) {}

  /** The rows, read from the store and laid end to end. */
  rows(): TokenRows {
    const { plan } = this;
    const width = rowBytes(plan.dtype, plan.shape);
    const out = new Uint8Array(plan.shape[0] * width);
    let at = 0;
    for (const seg of plan.segments) {
      const stored = this.store.readRows(seg.turn, plan.field);
      if (!stored || stored.byteLength < seg.rows * width) {
        throw new TokenRowsGoneError(`the ${plan.field} of turn ${seg.turn} are no longer stored`);
      }
      out.set(stored.subarray(0, seg.rows * width), at);
      at += seg.rows * width;
    }
    return { dtype: plan.dtype, shape: plan.shape, bytes: out };
  }

  /**
   * `{dtype, shape, data}` (base64), as every sample form carries them; `null` when the rows are
   * no longer stored (a deleted rollout of a gateway without a journal), so writing the rest of
   * the sample, or a stream of them, never fails on it.
   */
  toJSON(): TokenRowsWire | null {
    try {
      return encodeTokenRows(this.rows());
    } catch (e) {
      if (e instanceof TokenRowsGoneError) return null;
      throw e;
    }
  }
}
