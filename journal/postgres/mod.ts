/**
 * Every statement on the database the replicas of a gateway share, beside its schema
 * (`schema.ts`, created and migrated on start): the `Journal` contract of `trajectory/`, each
 * write fenced by the rollout's ownership epoch (`pg_journal.ts`, `event_rows.ts`); the sample
 * log's rows (`sample_rows.ts`); turns' token rows (`token_rows.ts`); the pending requests
 * trainers answer (`request_rows.ts`, claimed for their long polls in `claim_rows.ts`, their states
 * in `request_states.ts`, the events a trainer's
 * answer writes in `request_events.ts`, how long resolved ones stay in `resolved_requests.ts`); who
 * owns a rollout (`ownership_rows.ts`); the replicas and their shared pause (`replica_rows.ts`);
 * the notification channels (`channels.ts`); errors worth a retry (`connection_errors.ts`); a
 * replica's connections, which reconnect within half a second of the database's return
 * (`pool_options.ts`). `cluster/` coordinates replicas with these and writes no SQL of its own.
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
export { poolOptions } from "./pool_options.ts";
export { migrate } from "./schema.ts";
export { guardClosedSocketWrites } from "./closed_socket_write.ts";
export { type Outcome, RequestRows } from "./request_rows.ts";
export { ClaimRows } from "./claim_rows.ts";
export { pruneResolvedRequests } from "./resolved_requests.ts";
export { idsOf } from "./id_bytes.ts";
export { completionOf } from "./request_events.ts";
export { type Owner, OwnershipRows } from "./ownership_rows.ts";
export { ReplicaRows } from "./replica_rows.ts";
export { PAUSE_CHANNEL, QUEUE_CHANNEL, replicaChannel, SAMPLES_CHANNEL } from "./channels.ts";
