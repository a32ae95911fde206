/**
 * Who owns a rollout, and taking it (the `rollouts` table's ownership columns): every claim is one
 * conditional update that raises the rollout's epoch, so at most one replica holds a given epoch
 * and a stale owner's writes (checked against the epoch by the statements that write) are
 * refused. Lease times are the database's clock (`now()`), never a replica's, so clocks that
 * disagree cannot make two owners.
 *
 * Two ways to take a rollout: without evidence, only when its lease lapsed and its owner's
 * heartbeat is a lease old too (after the database itself was away every lease lapsed, and the
 * live owners renew them); with evidence that the owner is gone (its address refuses
 * connections, or another replica answers there) as soon as its heartbeat went silent
 * (`claimGone`), lease or not.
 *
 * @module
 */
import type { Sql } from "postgres";

export interface Owner {
  id: string;
  status: string;
  owner: string | null;
  ownerUrl: string | null;
  epoch: number;
  /** The owner's lease has not lapsed (or it still beats). */
  live: boolean;
  /** The hash of the rollout's token (null while its creation is in progress). */
  tokenHash: string | null;
}

export class OwnershipRows {
  constructor(
    readonly sql: Sql,
    readonly replica: string,
    readonly url: string,
    readonly leaseMs: number,
  ) {}

  /** The rollout's owner, by id or by the hash of its token; undefined when there is none. */
  async lookup(by: { id: string } | { tokenHash: string }): Promise<Owner | undefined> {
    const where = "id" in by ? this.sql`id = ${by.id}` : this.sql`token_hash = ${by.tokenHash}`;
    const [row] = await this.sql<
      {
        id: string;
        status: string;
        owner: string | null;
        owner_url: string | null;
        epoch: string;
        live: boolean;
        token_hash: string | null;
      }[]
    >`
      SELECT id, status, owner, owner_url, epoch, token_hash,
        coalesce(lease_until > now(), false) OR ${this.#ownerBeats()} AS live
      FROM rollouts WHERE ${where} AND status <> 'expired'`;
    if (!row) return undefined;
    return {
      id: row.id,
      status: row.status,
      owner: row.owner,
      ownerUrl: row.owner_url,
      epoch: Number(row.epoch),
      live: row.live,
      tokenHash: row.token_hash,
    };
  }

  /**
   * Reserves a new rollout id for this replica (epoch 1, or the next epoch of an expired one, or
   * of a reservation its dead owner left); returns the epoch, or undefined when the id is taken.
   * A reservation is a create in progress: its `rollout_created` event turns it `active` in the
   * same transaction, so a `reserved` row holds no event, and one whose lease lapsed with its
   * owner's heartbeat is a create that died half-way; the raised epoch fences that owner.
   */
  async reserve(id: string): Promise<number | undefined> {
    const [row] = await this.sql<{ epoch: string }[]>`
      INSERT INTO rollouts (id, status, owner, owner_url, epoch, lease_until)
      VALUES (${id}, 'reserved', ${this.replica}, ${this.url}, 1, ${this.#leaseEnd()})
      ON CONFLICT (id) DO UPDATE SET status = 'reserved', owner = ${this.replica},
        owner_url = ${this.url}, epoch = rollouts.epoch + 1, lease_until = ${this.#leaseEnd()}
        WHERE rollouts.status = 'expired'
          OR (rollouts.status = 'reserved' AND rollouts.lease_until < now()
            AND NOT ${this.#ownerBeats()})
      RETURNING epoch`;
    return row ? Number(row.epoch) : undefined;
  }

  /** Gives back a reservation that never became a rollout. */
  async unreserve(id: string): Promise<void> {
    await this.sql`
      DELETE FROM rollouts WHERE id = ${id} AND status = 'reserved' AND owner = ${this.replica}`;
  }

  /**
   * Takes over a rollout whose owner's lease lapsed, fenced by the epoch seen: returns the new
   * epoch, or undefined when another replica moved first or the owner renewed.
   */
  async claim(id: string, seenEpoch: number): Promise<number | undefined> {
    const [row] = await this.sql<{ epoch: string }[]>`
      UPDATE rollouts SET owner = ${this.replica}, owner_url = ${this.url}, epoch = epoch + 1,
        lease_until = ${this.#leaseEnd()}
      WHERE id = ${id} AND epoch = ${seenEpoch} AND status IN ('active', 'finished')
        AND (lease_until IS NULL OR lease_until < now()) AND NOT ${this.#ownerBeats()}
      RETURNING epoch`;
    return row ? Number(row.epoch) : undefined;
  }

  /**
   * Takes over a rollout whose owner is known to be gone (its address refuses connections, or
   * another replica answers there) once its heartbeat has been silent for `silentMs`, whatever
   * its lease: returns the new epoch, or undefined when another replica moved first or the
   * owner beat meanwhile.
   */
  async claimGone(id: string, seenEpoch: number, silentMs: number): Promise<number | undefined> {
    const [row] = await this.sql<{ epoch: string }[]>`
      UPDATE rollouts SET owner = ${this.replica}, owner_url = ${this.url}, epoch = epoch + 1,
        lease_until = ${this.#leaseEnd()}
      WHERE id = ${id} AND epoch = ${seenEpoch} AND status IN ('active', 'finished')
        AND owner IS DISTINCT FROM ${this.replica}
        AND NOT EXISTS (SELECT 1 FROM replicas p WHERE p.id = rollouts.owner
          AND p.heartbeat_at > now() - make_interval(secs => ${silentMs / 1000}))
      RETURNING epoch`;
    return row ? Number(row.epoch) : undefined;
  }

  /** Active rollouts `replica` owns (a replica found gone: they are taken over), oldest first. */
  async ownedBy(replica: string, limit: number): Promise<{ id: string; epoch: number }[]> {
    const rows = await this.sql<{ id: string; epoch: string }[]>`
      SELECT id, epoch FROM rollouts WHERE owner = ${replica} AND status = 'active'
      ORDER BY created_seq LIMIT ${limit}`;
    return rows.map((r) => ({ id: r.id, epoch: Number(r.epoch) }));
  }

  /**
   * Renews the leases of the rollouts this replica holds; returns those it still owns with their
   * epochs (any other was taken over). A row it owns but does not hold (a takeover that failed
   * half-way) is not renewed, so another replica can take it.
   */
  async renew(held: readonly string[]): Promise<Map<string, number>> {
    if (held.length === 0) return new Map();
    const rows = await this.sql<{ id: string; epoch: string }[]>`
      UPDATE rollouts SET lease_until = ${this.#leaseEnd()}
      WHERE owner = ${this.replica} AND id = ANY(${held as string[]}) RETURNING id, epoch`;
    return new Map(rows.map((r) => [r.id, Number(r.epoch)]));
  }

  /** Rollouts whose owner's lease lapsed a while ago (a dead replica's), oldest first. */
  async orphans(limit: number): Promise<{ id: string; epoch: number }[]> {
    const rows = await this.sql<{ id: string; epoch: string }[]>`
      SELECT id, epoch FROM rollouts
      WHERE status = 'active' AND (lease_until IS NULL OR lease_until < now())
        AND NOT ${this.#ownerBeats()}
      ORDER BY lease_until NULLS FIRST LIMIT ${limit}`;
    return rows.map((r) => ({ id: r.id, epoch: Number(r.epoch) }));
  }

  /**
   * The rollout's owner is beating (its heartbeat is younger than a lease): a lapsed lease of a
   * live replica is one it is about to renew (it was cut off from the database, as everyone
   * was), not a dead owner's.
   */
  #ownerBeats() {
    return this.sql`EXISTS (SELECT 1 FROM replicas p WHERE p.id = rollouts.owner
      AND p.heartbeat_at > now() - make_interval(secs => ${this.leaseMs / 1000}))`;
  }

  /** Gives this replica's leases up (it is closing): the others may take its rollouts at once. */
  async release(): Promise<void> {
    await this.sql`UPDATE rollouts SET lease_until = NULL WHERE owner = ${this.replica}`;
  }

  #leaseEnd() {
    return this.sql`now() + make_interval(secs => ${this.leaseMs / 1000})`;
  }
}
