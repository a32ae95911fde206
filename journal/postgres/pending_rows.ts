/**
 * What the journal does to the `pending` table: a rollout that finishes, is deleted or expires
 * withdraws its open requests in the same transaction, and their owner is told.
 *
 * @module
 */

// deno-lint-ignore no-explicit-any
type Tx = any;

/** Withdraws a rollout's open requests; their owner is told (`resolved:` on its channel). */
export async function withdrawPending(tx: Tx, rollout: string, reason: string): Promise<void> {
  await tx`
    WITH gone AS (
      UPDATE pending SET state = 'withdrawn', reason = ${reason}, resolved_at = now()
      WHERE rollout = ${rollout} AND state IN ('queued', 'delivered', 'leased')
      RETURNING request_id, rollout
    )
    SELECT pg_notify('rollgate_' || coalesce(r.owner, 'none'), 'resolved:' || g.request_id)
    FROM gone g JOIN rollouts r ON r.id = g.rollout`;
}
