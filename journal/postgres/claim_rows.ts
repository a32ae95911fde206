/**
 * The trainers' long polls' statements on `pending`: a replica claims requests for the polls
 * waiting on it (delivered, to be acknowledged within the ack timeout, or leased at once for a
 * poll that asks so), and releases one it claimed but could not hand over.
 *
 * @module
 */
import type { Sql } from "postgres";

/** A request claimed, with its owner (whose prompt it is); `expires`: when claimed leased. */
export interface ClaimedRequest {
  request_id: string;
  owner_url: string;
  owner: string;
  expires?: number;
}

export class ClaimRows {
  constructor(readonly sql: Sql, readonly replica: string, readonly ackTimeoutMs: number) {}

  /**
   * Claims up to `limit` requests (of `rollout`, if given) whose owner is alive, for long polls
   * waiting with lease `leaseMs`: those whose delivery or lease deadline passed first, then the
   * oldest queued. In that order. `leased`: claimed already leased for `leaseMs`, as an `ack`
   * would leave them, in the same statement (`expires`: when that lease runs out).
   */
  async claim(
    rollout: string | undefined,
    leaseMs: number,
    limit = 1,
    leased = false,
  ): Promise<ClaimedRequest[]> {
    type Row = Omit<ClaimedRequest, "expires"> & { fresh: boolean; seq: string; expires: string };
    const rows = await this.sql<Row[]>`
      WITH c AS (
        SELECT p.request_id, p.seq, p.state = 'queued' AS fresh
        FROM pending p JOIN rollouts r ON r.id = p.rollout
        WHERE (p.state = 'queued' OR (p.state IN ('delivered', 'leased') AND p.deadline < now()))
          AND r.lease_until > now()
          ${rollout === undefined ? this.sql`` : this.sql`AND p.rollout = ${rollout}`}
        ORDER BY p.state = 'queued', p.seq
        LIMIT ${limit}
        FOR UPDATE OF p SKIP LOCKED
      )
      UPDATE pending p SET state = ${leased ? "leased" : "delivered"}, epoch = p.epoch + 1,
        lease_ms = ${leaseMs},
        deadline = now() + make_interval(secs => ${(leased ? leaseMs : this.ackTimeoutMs) / 1000}),
        delivered_by = ${this.replica}
      FROM c, rollouts r
      WHERE p.request_id = c.request_id AND r.id = p.rollout
      RETURNING p.request_id, r.owner_url, r.owner, c.fresh, c.seq,
        (extract(epoch FROM p.deadline) * 1000)::bigint AS expires`;
    return rows.sort((a, b) => Number(a.fresh) - Number(b.fresh) || Number(a.seq) - Number(b.seq))
      .map(({ request_id, owner_url, owner, expires }) =>
        leased
          ? { request_id, owner_url, owner, expires: Number(expires) }
          : { request_id, owner_url, owner }
      );
  }

  /**
   * A claimed request its owner could not hand over is offered again a second later (claimed
   * leased too: the lease was never handed to anyone).
   */
  async release(requestId: string): Promise<void> {
    await this.sql`
      UPDATE pending SET deadline = now() + interval '1 second'
      WHERE request_id = ${requestId} AND state IN ('delivered', 'leased')
        AND delivered_by = ${this.replica}`;
  }
}
