/**
 * How long a resolved request stays in `pending`. A row is needed while its request is open and
 * for a while after: a trainer whose `complete` answer was lost sends it again and is told
 * `resent`, a late `ack` learns it was resolved (409) or withdrawn (410), and the owner reads the
 * outcome. Past that it is dead weight: the turn's outcome is in `events` (written with it), and
 * every row kept makes the table, its indexes and each vacuum's pass over them grow with the run.
 *
 * Only rows of rollouts that are finished or deleted go: a live rollout's turn restored after a
 * takeover finds its request by id, and a completion accepted before the crash must still be
 * there (`cluster_gate.ts`). A row still carrying routing rows its owner has not stored stays.
 *
 * @module
 */
import type { Sql } from "postgres";
import { OPEN_STATES } from "./request_states.ts";

/** How long after its rollout's request resolved a row is kept (a resend comes within seconds). */
export const RESOLVED_RETENTION_MS = 10 * 60_000;

/** Rows one pruning statement deletes at most (each statement stays short). */
const PRUNE_BATCH = 5_000;

/**
 * Deletes up to `limit` rows resolved more than `retentionMs` ago whose rollout finished or was
 * deleted; returns how many went. Any replica may run it at any time: two at once delete each
 * row once.
 */
export async function pruneResolvedRequests(
  sql: Sql,
  retentionMs = RESOLVED_RETENTION_MS,
  limit = PRUNE_BATCH,
): Promise<number> {
  const gone = await sql`
    DELETE FROM pending WHERE request_id IN (
      SELECT p.request_id FROM pending p LEFT JOIN rollouts r ON r.id = p.rollout
      WHERE (r.id IS NULL OR r.status = 'finished')
        AND p.state NOT IN ${sql(OPEN_STATES)}
        AND p.resolved_at < now() - make_interval(secs => ${retentionMs / 1000})
        AND p.routed_experts IS NULL
      LIMIT ${limit}
    )`;
  return gone.count;
}
