/**
 * The journal on PostgreSQL: the `Journal` contract of `trajectory/` in a database every replica
 * of a gateway shares, each write fenced by the rollout's ownership epoch (`pg_journal.ts`); the
 * schema and its migrations (`schema.ts`).
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
export {
  isConnectionError,
  PgJournal,
  type PgJournalOptions,
  RolloutFencedError,
  tokenHash,
  withdrawPending,
} from "./pg_journal.ts";
export { migrate, SCHEMA_VERSION } from "./schema.ts";
