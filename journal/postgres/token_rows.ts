/**
 * Turns' token rows (`routed_experts`) in the `token_rows` table: written by the rollout's owner,
 * fenced by its ownership epoch like its events (a replica that lost the rollout writes
 * nothing), read back by turn when samples are written out.
 *
 * Writing a turn's rows also drops the copy its completed request carried (`pending`, found by a
 * partial index of the requests that carry rows): the rows are then kept once. A restore that
 * finds the request's copy gone reads them here instead (`request_table.ts`, `outcome`).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { Sql } from "postgres";
import type { TokenRowField, TokenRows } from "../../generation/mod.ts";

export interface RowsOwner {
  rollout: string;
  replica: string;
  epoch: number;
}

/** Keeps a turn's rows of one field; false when `owner` does not own the rollout at its epoch. */
export async function putTokenRows(
  sql: Sql,
  owner: RowsOwner,
  turn: string,
  field: TokenRowField,
  rows: TokenRows,
): Promise<boolean> {
  const { bytes } = rows;
  const [row] = await sql<{ written: boolean }[]>`
    WITH owned AS (
      SELECT id FROM rollouts
      WHERE id = ${owner.rollout} AND owner = ${owner.replica} AND epoch = ${owner.epoch}
      FOR SHARE
    ), put AS (
      INSERT INTO token_rows (turn, field, rollout, dtype, shape, data)
      SELECT ${turn}, ${field}, owned.id, ${rows.dtype}, ${JSON.stringify(rows.shape)}::text::jsonb,
        ${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)}::bytea
      FROM owned
      ON CONFLICT (turn, field) DO UPDATE SET rollout = EXCLUDED.rollout,
        dtype = EXCLUDED.dtype, shape = EXCLUDED.shape, data = EXCLUDED.data
      RETURNING turn
    ), carried AS (
      UPDATE pending SET routed_experts = NULL
      WHERE turn_id = ${turn} AND routed_experts IS NOT NULL AND EXISTS (SELECT 1 FROM put)
    )
    SELECT EXISTS (SELECT 1 FROM put) AS written`;
  return row.written;
}

/** The stored rows of `turns` (those still stored), by turn. */
export async function readTokenRows(
  sql: Sql,
  turns: readonly string[],
  field: TokenRowField,
): Promise<Map<string, Uint8Array>> {
  const rows = await sql<{ turn: string; data: Uint8Array }[]>`
    SELECT turn, data FROM token_rows WHERE field = ${field} AND turn = ANY(${turns as string[]})`;
  return new Map(rows.map((r) => [r.turn, r.data]));
}

// deno-lint-ignore no-explicit-any
type Tx = any;

/** A deleted rollout's rows, unless logged samples refer to them. */
export async function forgetTokenRows(tx: Tx, rollout: string): Promise<void> {
  await tx`
    DELETE FROM token_rows WHERE rollout = ${rollout}
      AND NOT EXISTS (SELECT 1 FROM samples WHERE rollout = ${rollout})`;
}
