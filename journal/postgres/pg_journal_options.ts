/**
 * How a replica's PostgreSQL journal is set up: who it is, and how long it retries.
 *
 * @module
 */
export interface PgJournalOptions {
  /** This replica's id (written with every event; ownership is checked against it). */
  replica: string;
  /** How long a write is retried while the database is unreachable (default 15 s). */
  retryMs?: number;
  /** How long one attempt of an event batch may take before it is sent again (default 10 s). */
  attemptMs?: number;
  /** Token rows held in memory beyond those samples being written out need (default 64 MiB). */
  rowCacheBytes?: number;
}
