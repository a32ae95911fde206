/**
 * The journal on PostgreSQL: the `Journal` contract of `trajectory/` in a database every replica
 * of a gateway shares, each write fenced by the rollout's ownership epoch (`pg_journal.ts`); the
 * schema and its migrations (`schema.ts`); the sample log's rows (`sample_rows.ts`); requests a
 * finishing rollout withdraws (`pending_rows.ts`); errors worth a retry (`connection_errors.ts`).
 *
 * @example
 * ```ts
 * import postgres from "postgres";
 * import { migrate, PgJournal } from "./mod.ts";
 *
 * const connect = async (url: string) => {
 *   const sql = postgres(url);
 *   await migrate(sql);
 *   return new PgJournal(sql, { replica: "a1" });
 * };
 * ```
 *
 * @module
 */
export { PgJournal, type PgJournalOptions } from "./pg_journal.ts";
export { RolloutFencedError, tokenHash } from "./event_rows.ts";
export { isConnectionError } from "./connection_errors.ts";
export { migrate, SCHEMA_VERSION } from "./schema.ts";
