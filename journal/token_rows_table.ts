/**
 * Turns' token rows (`routed_experts`) in the journal's SQLite file, one row per turn and field:
 * the bytes as they came (uint8 expert ids: 384 bytes a position for 48 layers × top-8), written
 * when the turn is recorded and read back when a sample is written out, so the gateway's memory
 * holds none of them.
 *
 * A logged sample refers to its rows (`{"$rows": plan}` in its JSON, see `samples_codec.ts`): a
 * deleted rollout's rows stay while its samples are in the log.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import type { TokenRowField, TokenRows } from "../generation/mod.ts";

export const TOKEN_ROWS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS token_rows (
    turn TEXT NOT NULL,
    field TEXT NOT NULL,
    rollout TEXT NOT NULL,
    dtype TEXT NOT NULL,
    shape TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (turn, field)
  );
  CREATE INDEX IF NOT EXISTS token_rows_by_rollout ON token_rows (rollout);
`;

export class TokenRowsTable {
  readonly #put: StatementSync;
  readonly #read: StatementSync;
  readonly #forget: StatementSync;

  constructor(db: DatabaseSync) {
    this.#put = db.prepare(
      "INSERT OR REPLACE INTO token_rows (turn, field, rollout, dtype, shape, data) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.#read = db.prepare("SELECT data FROM token_rows WHERE turn = ? AND field = ?");
    this.#forget = db.prepare(
      "DELETE FROM token_rows WHERE rollout = ? AND NOT EXISTS (SELECT 1 FROM samples WHERE rollout = ?)",
    );
  }

  put(rollout: string, turn: string, field: TokenRowField, rows: TokenRows): void {
    this.#put.run(turn, field, rollout, rows.dtype, JSON.stringify(rows.shape), rows.bytes);
  }

  read(turn: string, field: TokenRowField): Uint8Array | null {
    const row = this.#read.get(turn, field) as { data: Uint8Array } | undefined;
    return row?.data ?? null;
  }

  /** A deleted rollout's rows, unless logged samples refer to them. */
  forget(rollout: string): void {
    this.#forget.run(rollout, rollout);
  }
}
