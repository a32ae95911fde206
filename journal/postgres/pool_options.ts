/**
 * How a replica opens its connections to PostgreSQL. The `postgres` client waits before it
 * reconnects, longer after every failed attempt of any connection of the pool
 * (`(0.5 … 1) × min(3^failures / 100, 20)` s, the count shared by the pool and reset only by a
 * connection that succeeds). While the database is away, every write sent again fails on every
 * connection, so a few seconds away put ten connections 10–20 s out: once the database is back,
 * the replica's writes waited past their retry time (the journal failed) and its heartbeat past
 * its lease (another replica took its rollouts), and it stopped, although the database answered.
 * Here the wait is bounded by {@link MAX_RECONNECT_DELAY_S}: a replica reaches the database
 * within half a second of its return, and an attempt on a database that refuses costs a refused
 * connection, twice a second per connection at most.
 *
 * @module
 */

/** The longest a connection waits before it tries again (seconds). */
export const MAX_RECONNECT_DELAY_S = 0.5;

/** The wait before a reconnect after `failures` failed attempts of the pool (seconds, jittered). */
export function reconnectDelay(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** failures, MAX_RECONNECT_DELAY_S);
}

/** The options of a replica's pool of `max` connections. */
export function poolOptions(max: number, connectTimeoutS: number) {
  return {
    max,
    onnotice: () => {},
    connect_timeout: connectTimeoutS,
    // Connections are kept: a replica's next write must not pay a connect.
    idle_timeout: 0,
    backoff: reconnectDelay,
  };
}
