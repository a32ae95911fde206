/**
 * The sample log's rows: samples appended with one cursor sequence for every replica, read back
 * in cursor order. A sample's token rows are kept as their plan (`sample_rows_codec.ts`); a page
 * read back carries the rows its samples need, read at once, whichever replica wrote them.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { Sql } from "postgres";
import type { TokenRowField } from "../../generation/mod.ts";
import type { LoggedSample, Sample, TokenRowStore } from "../../trajectory/mod.ts";
import { joinArrays, splitArrays } from "../sample_row.ts";
import { rowsTurns, sampleRowsJson, withSampleRows } from "../sample_rows_codec.ts";
import { readTokenRows } from "./token_rows.ts";

/** Any number: the lock that makes sample cursors commit in the order they were taken. */
const SAMPLE_LOCK = 7_460_228;

// deno-lint-ignore no-explicit-any
type Tx = any;

/**
 * Samples in the log. Cursors are taken under a transaction lock so they commit in cursor
 * order: a reader never sees cursor 6 before 5 commits and then misses 5.
 */
export async function appendSamples(
  tx: Tx,
  samples: readonly Sample[],
  uid: string,
): Promise<number[]> {
  if (samples.length === 0) return [];
  await tx`SELECT pg_advisory_xact_lock(${SAMPLE_LOCK})`;
  const cursors: number[] = [];
  for (const s of samples) {
    const { data, arrays } = splitArrays(sampleRowsJson(s));
    const [row] = await tx`
      INSERT INTO samples (rollout, data, arrays, uid)
      VALUES (${String(s.rollout_id)}, ${JSON.stringify(data)},
        ${arrays ? Buffer.from(arrays) : null}, ${uid})
      RETURNING cursor`;
    cursors.push(Number(row.cursor));
  }
  return cursors;
}

export async function samplesAfter(
  sql: Sql,
  cursor: number,
  limit: number,
): Promise<LoggedSample[]> {
  const rows = await sql<{ cursor: string; data: string; arrays: Uint8Array | null }[]>`
    SELECT cursor, data, arrays FROM samples WHERE cursor > ${cursor}
    ORDER BY cursor LIMIT ${limit}`;
  const page = rows.map((r) => ({
    cursor: Number(r.cursor),
    fields: joinArrays(JSON.parse(r.data), r.arrays),
  }));
  const store = await pageRows(sql, page.map((p) => p.fields));
  return page.map((p) => ({
    cursor: p.cursor,
    sample: withSampleRows(p.fields, store) as unknown as Sample,
  }));
}

/** The token rows a page of samples refers to, read in one statement per field (read-only). */
async function pageRows(
  sql: Sql,
  samples: readonly Record<string, unknown>[],
): Promise<TokenRowStore> {
  const wanted = new Map<TokenRowField, Set<string>>();
  for (const s of samples) {
    for (const [field, turns] of Object.entries(rowsTurns(s))) {
      const set = wanted.get(field as TokenRowField) ?? new Set<string>();
      for (const t of turns!) set.add(t);
      wanted.set(field as TokenRowField, set);
    }
  }
  const found = new Map<TokenRowField, Map<string, Uint8Array>>();
  for (const [field, turns] of wanted) {
    found.set(field, await readTokenRows(sql, [...turns], field));
  }
  return {
    putRows: () => Promise.reject(new Error("a page of logged samples is read-only")),
    readRows: (turn, field) => found.get(field)?.get(turn) ?? null,
  };
}

/** The oldest cursor kept, or the next one when the log is empty. */
export async function oldestCursor(sql: Sql): Promise<number> {
  const [row] = await sql<{ first: string | null }[]>`SELECT min(cursor) AS first FROM samples`;
  if (row.first !== null) return Number(row.first);
  const [seq] = await sql<{ last_value: string; is_called: boolean }[]>`
    SELECT last_value, is_called FROM samples_cursor_seq`;
  return seq.is_called ? Number(seq.last_value) + 1 : 1;
}

/** The newest cursor committed; 0 before the first (cursors commit in order, see above). */
export async function newestCursor(sql: Sql): Promise<number> {
  const [row] = await sql<{ last: string | null }[]>`SELECT max(cursor) AS last FROM samples`;
  return Number(row.last ?? 0);
}
