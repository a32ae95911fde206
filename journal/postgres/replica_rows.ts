/**
 * The replicas of a gateway as the database knows them (`replicas`: who is up, where, and when it
 * last beat) and the state they share (`gateway_state`: the pause, told to every replica on
 * {@link PAUSE_CHANNEL}). Heartbeat times are the database's clock.
 *
 * @module
 */
import type { Sql } from "postgres";
import { PAUSE_CHANNEL } from "./channels.ts";

/** Another replica, as the database last heard of it. */
export interface ReplicaRow {
  id: string;
  url: string;
  /** Milliseconds since its last beat (the database's clock). */
  silentMs: number;
}

export class ReplicaRows {
  constructor(readonly sql: Sql, readonly replica: string, readonly url: string) {}

  /** This replica is up (its heartbeat); returns whether the gateway is paused. */
  async beat(): Promise<boolean> {
    const [state] = await this.sql<{ paused: boolean }[]>`
      WITH up AS (
        INSERT INTO replicas (id, url, heartbeat_at) VALUES (${this.replica}, ${this.url}, now())
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), url = EXCLUDED.url
      )
      SELECT paused FROM gateway_state`;
    return state.paused;
  }

  /** The other replicas that beat within `withinMs`: their URLs. */
  async peers(withinMs: number): Promise<string[]> {
    const rows = await this.sql<{ url: string }[]>`
      SELECT url FROM replicas WHERE id <> ${this.replica}
        AND heartbeat_at > now() - make_interval(secs => ${withinMs / 1000})`;
    return rows.map((r) => r.url);
  }

  /** The replicas (this one included) that beat within `withinMs`. */
  async beating(withinMs: number): Promise<Set<string>> {
    const rows = await this.sql<{ id: string }[]>`
      SELECT id FROM replicas WHERE heartbeat_at > now() - make_interval(secs => ${
      withinMs / 1000
    })`;
    return new Set(rows.map((r) => r.id));
  }

  /** Other replicas silent for longer than `silentMs` that still own active rollouts. */
  async silent(silentMs: number): Promise<ReplicaRow[]> {
    const rows = await this.sql<{ id: string; url: string; silent_ms: string }[]>`
      SELECT p.id, p.url,
        (extract(epoch FROM now() - p.heartbeat_at) * 1000)::bigint AS silent_ms
      FROM replicas p
      WHERE p.id <> ${this.replica}
        AND p.heartbeat_at < now() - make_interval(secs => ${silentMs / 1000})
        AND EXISTS (SELECT 1 FROM rollouts r WHERE r.owner = p.id AND r.status = 'active')`;
    return rows.map((r) => ({ id: r.id, url: r.url, silentMs: Number(r.silent_ms) }));
  }

  /** Sets the pause for every replica and tells them. */
  async setPaused(paused: boolean): Promise<void> {
    await this.sql.begin(async (tx) => {
      await tx`UPDATE gateway_state SET paused = ${paused}`;
      await tx`SELECT pg_notify(${PAUSE_CHANNEL}, ${paused ? "paused" : "running"})`;
    });
  }

  /** This replica leaves (it is closing): its row goes. */
  async leave(): Promise<void> {
    await this.sql`DELETE FROM replicas WHERE id = ${this.replica}`;
  }
}
