/**
 * The journal on PostgreSQL: the `Journal` contract of `trajectory/` in a database every replica
 * of a gateway shares, each write fenced by the rollout's ownership epoch (`pg_journal.ts`); the
 * schema and its migrations (`schema.ts`); the sample log's rows (`sample_rows.ts`); requests a
 * finishing rollout withdraws (`pending_rows.ts`); errors worth a retry (`connection_errors.ts`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import postgres from "postgres";
 * import { isConnectionError, migrate, PgJournal, tokenHash } from "./mod.ts";
 *
 * const connect = async (url: string) => {
 *   const sql = postgres(url);
 *   await migrate(sql); // safe when several replicas start at once
 *   return new PgJournal(sql, { replica: "a1" });
 * };
 * // Nothing listens on port 9: a connection error, which a write may be sent again after.
 * const refused = await connect("postgres://rollgate@127.0.0.1:9/rollgate").catch((e) => e);
 * assert.ok(isConnectionError(refused));
 * // A rollout's token is kept as its hash only.
 * assert.equal(tokenHash("rg_a"), tokenHash("rg_a"));
 * assert.ok(!tokenHash("rg_a").includes("rg_a"));
 * ```
 *
 * @module
 */
export { PgJournal } from "./pg_journal.ts";
export { tokenHash } from "./event_rows.ts";
export { isConnectionError } from "./connection_errors.ts";
export { migrate } from "./schema.ts";
export { guardClosedSocketWrites } from "./closed_socket_write.ts";
