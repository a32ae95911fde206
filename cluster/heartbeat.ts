/**
 * A replica's heartbeat: every beat (`beatMs`, 1 s by default) it says it is up (`replicas`) and
 * follows the gateway-wide pause; every third of the owner lease it renews the leases of the
 * rollouts it holds. A rollout it held that the renewal no longer returns was taken over: this
 * replica's copy is stale, and `onFenced` is told (the replica stops; see `cluster.ts`).
 *
 * Between beats it adopts dead replicas' rollouts, so they move even when no call for them
 * arrives: a replica silent for two beats whose address is found gone (`owner_probe.ts`) at once,
 * any other rollout only once its lease lapsed and its owner's heartbeat is a lease old.
 *
 * `reachable` is what `/ready` reports: false from the first failed beat until one succeeds.
 *
 * @module
 */
import type { OwnershipRows, PgJournal, ReplicaRows } from "../journal/mod.ts";

export interface HeartbeatOptions {
  replicas: ReplicaRows;
  ownership: OwnershipRows;
  journal: PgJournal;
  /** How often this replica says it is up. */
  beatMs: number;
  /** Applies the gateway-wide pause here. */
  paused(paused: boolean): void;
  /** Takes over a rollout whose lease lapsed (`gone`: its owner was found gone, lease or not). */
  adopt(orphan: { id: string; epoch: number }, gone: boolean): Promise<void>;
  /** Whether a silent replica is gone (its address refuses connections …). */
  gone(replica: { id: string; url: string }): Promise<boolean>;
  /** Rollouts this replica held were taken over by another. */
  onFenced(lost: string[]): void;
}

/** A replica silent for this many beats, and found gone, has its rollouts taken at once. */
export const SILENT_BEATS = 2;

export class Heartbeat {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #failure: string | null = "no heartbeat yet";
  /** When a beat last reached the database (`performance.now()`). */
  #lastOk = -Infinity;
  /** When the leases were last renewed. */
  #renewed = -Infinity;
  /** An adoption round still running (the next beat does not start another). */
  #adopting: Promise<void> | null = null;
  /** When the database answered again after it was away (`performance.now()`). */
  #back = performance.now();
  #stopped = false;

  constructor(readonly o: HeartbeatOptions) {}

  get leaseMs(): number {
    return this.o.ownership.leaseMs;
  }

  /** How long a replica's heartbeat is silent before evidence that it is gone counts. */
  get silentMs(): number {
    return SILENT_BEATS * this.o.beatMs;
  }

  /**
   * Whether this replica may take rollouts over without evidence that their owner is gone: not
   * while the database is away, and not for a lease after it came back (the other replicas renew
   * their leases meanwhile).
   */
  get mayClaim(): boolean {
    return this.reachable === true && performance.now() - this.#back > this.leaseMs;
  }

  /** True when a beat reached the database within the last half lease, else why not. */
  get reachable(): true | string {
    if (this.#failure !== null) return `the database is unreachable: ${this.#failure}`;
    const age = performance.now() - this.#lastOk;
    if (age > this.leaseMs / 2) {
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
    }, this.o.beatMs);
  }

  async #adopt(): Promise<void> {
    const { ownership, replicas } = this.o;
    // Evidence first: a dead replica's rollouts move within seconds of its death.
    for (const silent of await replicas.silent(this.silentMs).catch(() => [])) {
      if (!await this.o.gone(silent)) continue;
      for (const orphan of await ownership.ownedBy(silent.id, 64).catch(() => [])) {
        await this.#take(orphan, true);
      }
    }
    if (!this.mayClaim) return;
    for (const orphan of await ownership.orphans(16).catch(() => [])) {
      await this.#take(orphan, false);
    }
  }

  async #take(orphan: { id: string; epoch: number }, gone: boolean): Promise<void> {
    await this.o.adopt(orphan, gone).catch((e) =>
      console.error(`rollgate: taking over rollout ${orphan.id} failed: ${e.message}`)
    );
  }

  /** One beat; never throws (a failure is what `reachable` reports). */
  async beat(): Promise<void> {
    const { journal, ownership, replicas } = this.o;
    try {
      this.o.paused(await replicas.beat());
      if (performance.now() - this.#renewed >= this.leaseMs / 3) {
        const held = [...journal.owned()];
        const kept = await ownership.renew(held.map(([id]) => id));
        this.#renewed = performance.now();
        const lost = held.filter(([id, epoch]) => kept.get(id) !== epoch).map(([id]) => id);
        if (lost.length > 0) this.o.onFenced(lost);
      }
      if (this.reachable !== true) this.#back = performance.now();
      this.#failure = null;
      this.#lastOk = performance.now();
      // Adopting runs beside the beats: a slow takeover must not delay the next renewal.
      if (this.#adopting) return;
      this.#adopting = this.#adopt().finally(() => this.#adopting = null);
    } catch (e) {
      this.#failure = (e as Error).message;
    }
  }
}
