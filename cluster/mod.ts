/**
 * Several gateway processes as one gateway: replicas that share a PostgreSQL database. The
 * database is the system of record (rollouts with their owner, epoch and lease; the journal's
 * events; pending requests; samples), a rollout's live state (its agent connections, turn tree,
 * caches) is held by the one replica that owns it, and any replica answers any call: it serves,
 * forwards to the owner, or takes the rollout over when the owner's lease lapsed.
 *
 * It coordinates only: every statement on the database is in `journal/postgres/` beside the
 * schema (ownership, requests, replicas).
 *
 * - `cluster.ts`: a replica: the database, the journal and queue there, the front, the heartbeat.
 * - `front.ts`: routing a call to the replica that holds its rollout, checked before its body is
 *   read, held (not refused) while its rollout moves; `held_stream.ts`: a streamed call held or
 *   passed on, kept alive and routed again when its owner dies before the answer.
 * - `owner_probe.ts`: evidence that a replica is gone, so its rollouts move before its lease ends.
 * - `takeover.ts`: claiming a rollout and restoring it from its events.
 * - `cluster_gate.ts`: the pending requests in the database, as the trainer API's queue and the
 *   owner's generation backend.
 * - `heartbeat.ts`: beats, leases renewed, the pause followed, dead replicas' rollouts adopted.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Cluster } from "./mod.ts";
 *
 * // A replica joins the gateway in its database; none listens here, so it cannot join.
 * await assert.rejects(
 *   Cluster.open({
 *     databaseUrl: "postgres://rollgate@127.0.0.1:9/rollgate",
 *     advertiseUrl: "http://10.0.0.5:7860",
 *     stop: () => Deno.exit(75),
 *   }),
 * );
 * ```
 *
 * @module
 */
export { Cluster, STREAM_HEAD_HOLD_MS } from "./cluster.ts";
