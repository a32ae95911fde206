/**
 * What a trainer's queue of requests reports: the lease an acknowledgement granted, and the counts
 * `/api/status` shows. The same for one process's gate and for replicas' shared queue.
 *
 * @module
 */

/** What an `ack` (or renewal) granted. */
export interface Lease {
  request_id: string;
  lease_ms: number;
  /** Milliseconds since the epoch. */
  expires_at: number;
}

/** Counts for `/api/status`. */
export interface GateStats {
  queued: number;
  delivered: number;
  leased: number;
  /** Deliveries whose deadline passed, so the request was offered again (since start). */
  redelivered: number;
  /** Requests withdrawn before a trainer resolved them (since start). */
  withdrawn: number;
}
