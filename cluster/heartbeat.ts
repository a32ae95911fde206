/**
 * A replica's heartbeat: every third of the lease it says it is up (`replicas`), renews the
 * leases of the rollouts it holds, follows the gateway-wide pause, and takes over rollouts whose
 * owner's lease lapsed a lease ago (a dead replica's rollouts move even when no call for them
 * arrives). A rollout it held that the renewal no longer returns was taken over: this replica's
 * copy is stale, and `onFenced` is told (the replica stops; see `cluster.ts`).
 *
 * `reachable` is what `/ready` reports: false from the first failed beat until one succeeds.
 *
 * @module
 */
import type { Sql } from "postgres";
import type { PgJournal } from "../journal/mod.ts";
import type { Ownership } from "./ownership.ts";

export interface HeartbeatOptions {
  sql: Sql;
  journal: PgJournal;
  ownership: Ownership;
  /** Applies the gateway-wide pause here. */
  paused(paused: boolean): void;
  /** Takes over a dead replica's rollout. */
  adopt(orphan: { id: string; epoch: number }): Promise<void>;
  /** Rollouts this replica held were taken over by another. */
  onFenced(lost: string[]): void;
}

export class Heartbeat {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #failure: string | null = "no heartbeat yet";
  /** When a beat last reached the database (`performance.now()`). */
  #lastOk = -Infinity;
  /** An adoption round still running (the next beat does not start another). */
  #adopting: Promise<void> | null = null;
  /** When the database answered again after it was away (`performance.now()`). */
  #back = performance.now();
  #stopped = false;

  constructor(readonly o: HeartbeatOptions) {}

  /**
   * Whether this replica may take rollouts over: not while the database is away, and not for a
   * lease after it came back (the other replicas renew their leases meanwhile).
   */
  get mayClaim(): boolean {
    return this.reachable === true &&
      performance.now() - this.#back > this.o.ownership.leaseMs;
  }

  /** True when a beat reached the database within the last half lease, else why not. */
  get reachable(): true | string {
    if (this.#failure !== null) return `the database is unreachable: ${this.#failure}`;
    const age = performance.now() - this.#lastOk;
    if (age > this.o.ownership.leaseMs / 2) {
      return `the database has not answered the heartbeat for ${(age / 1000).toFixed(1)} s`;
    }
    return true;
  }

  async start(): Promise<void> {
    await this.beat();
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(async () => {
      await this.beat();
      this.#schedule();
    }, this.o.ownership.leaseMs / 3);
  }

  async #adopt(): Promise<void> {
    for (const orphan of await this.o.ownership.orphans(16).catch(() => [])) {
      await this.o.adopt(orphan).catch((e) =>
        console.error(`rollgate: taking over rollout ${orphan.id} failed: ${e.message}`)
      );
    }
  }

  /** One beat; never throws (a failure is what `reachable` reports). */
  async beat(): Promise<void> {
    const { sql, journal, ownership } = this.o;
    try {
      await sql`
        INSERT INTO replicas (id, url, heartbeat_at) VALUES (${ownership.replica}, ${ownership.url}, now())
        ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`;
      const held = [...journal.owned()];
      const kept = await ownership.renew(held.map(([id]) => id));
      const lost = held.filter(([id, epoch]) => kept.get(id) !== epoch).map(([id]) => id);
      if (lost.length > 0) this.o.onFenced(lost);
      const [state] = await sql<{ paused: boolean }[]>`SELECT paused FROM gateway_state`;
      this.o.paused(state.paused);
      if (this.reachable !== true) this.#back = performance.now();
      this.#failure = null;
      this.#lastOk = performance.now();
      // Adopting runs beside the beats: a slow takeover must not delay the next renewal.
      if (!this.mayClaim || this.#adopting) return;
      this.#adopting = this.#adopt().finally(() => this.#adopting = null);
    } catch (e) {
      this.#failure = (e as Error).message;
    }
  }
}
