/**
 * One replica of a gateway whose replicas share a PostgreSQL database: it opens the database
 * (creating or migrating the schema), makes the journal and the request queue that live there,
 * and once the gateway is made, puts the front before it (`front.ts`), starts the heartbeat and
 * listens for the notifications that wake it (a resolved request on its own channel, a queued
 * request, new samples, the pause).
 *
 * A replica whose rollouts were taken over while it stalled (paused past its lease, cut off),
 * or whose journal failed to keep a change, holds a stale copy of what it served: it calls
 * `stop` (`serve` exits with status 75 so its supervisor starts it clean; its rollouts are
 * served by the others meanwhile).
 *
 * @module
 */
import postgres, { type Sql } from "postgres";
import {
  guardClosedSocketWrites,
  migrate,
  type Owner,
  OwnershipRows,
  PAUSE_CHANNEL,
  PgJournal,
  poolOptions,
  QUEUE_CHANNEL,
  replicaChannel,
  ReplicaRows,
  SAMPLES_CHANNEL,
  tokenHash,
} from "../journal/mod.ts";
import { DEFAULT_KEEPALIVE_MS, type Gateway, idsFromBase64 } from "../gateway/mod.ts";
import { DEFAULT_ACK_TIMEOUT_MS, DEFAULT_LEASE_MS, MAX_LEASE_MS } from "../generation/mod.ts";
import { ClusterGate } from "./cluster_gate.ts";
import { clusterFront } from "./front.ts";
import { Heartbeat } from "./heartbeat.ts";
import { replicaGone } from "./owner_probe.ts";
import { takeOver } from "./takeover.ts";

export const DEFAULT_OWNER_LEASE_MS = 10_000;
/** How often a replica says it is up (a dead one is found within two beats). */
export const DEFAULT_BEAT_MS = 1_000;
/** The longest a takeover (claim and restore) is given before a held call is refused. */
const TAKEOVER_MS = 10_000;
/**
 * A replica's streamed answers wait for their first event up to this long before their head is
 * written: a replica that dies before an answer started leaves a failed request, which the
 * agent's SDK retries on another replica, not a broken stream, which it does not. (Under the
 * idle timeouts of common proxies, 60 s.)
 */
export const STREAM_HEAD_HOLD_MS = 30_000;

export interface ClusterOptions {
  databaseUrl: string;
  /** How other replicas reach this one. */
  advertiseUrl: string;
  /** A rollout's owner lease (renewed every third of it). */
  leaseMs?: number;
  /** How often this replica says it is up (default 1 s, at most a third of the lease). */
  beatMs?: number;
  adminToken?: string;
  /** Acknowledgement timeout and leases of requests handed to trainers. */
  delivery?: { ackTimeoutMs?: number; defaultLeaseMs?: number; maxLeaseMs?: number };
  /** Connections this replica opens to the database (default 10). */
  connections?: number;
  /** This replica can no longer serve what it holds (see the module doc). */
  stop(reason: string): void;
}

type Handler = (req: Request, info?: unknown) => Promise<Response>;

export class Cluster {
  readonly replica = crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  readonly journal: PgJournal;
  readonly requests: ClusterGate;
  readonly ownership: OwnershipRows;
  readonly replicas: ReplicaRows;
  #heartbeat?: Heartbeat;
  #listening: { unlisten(): Promise<void> }[] = [];
  #stopped = false;

  private constructor(readonly sql: Sql, readonly o: ClusterOptions) {
    this.journal = new PgJournal(sql, { replica: this.replica });
    this.ownership = new OwnershipRows(
      sql,
      this.replica,
      o.advertiseUrl,
      o.leaseMs ?? DEFAULT_OWNER_LEASE_MS,
    );
    this.replicas = new ReplicaRows(sql, this.replica, o.advertiseUrl);
    this.requests = new ClusterGate({
      sql,
      replica: this.replica,
      ackTimeoutMs: o.delivery?.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS,
      defaultLeaseMs: o.delivery?.defaultLeaseMs ?? DEFAULT_LEASE_MS,
      maxLeaseMs: o.delivery?.maxLeaseMs ?? MAX_LEASE_MS,
      fetchRequest: (url, rid) => this.#fetchRequest(url, rid),
    });
  }

  /** Connects, creates or migrates the schema. */
  static async open(o: ClusterOptions): Promise<Cluster> {
    guardClosedSocketWrites();
    const sql = postgres(o.databaseUrl, poolOptions(o.connections ?? 10, 10));
    try {
      await migrate(sql);
    } catch (e) {
      await sql.end({ timeout: 1 }).catch(() => {});
      throw e;
    }
    return new Cluster(sql, o);
  }

  /** Readiness: the database answers the heartbeat. */
  get reachable(): true | string {
    return this.#heartbeat?.reachable ?? "not started";
  }

  /** The front of `gw` (serve this), with the heartbeat and the notifications running. */
  async attach(gw: Gateway): Promise<Handler> {
    const takeovers = new Map<string, Promise<boolean>>();
    const leaseMs = this.ownership.leaseMs;
    const beatMs = Math.min(this.o.beatMs ?? DEFAULT_BEAT_MS, leaseMs / 3);
    const take = (seen: Owner, gone: boolean) => {
      const heartbeat = this.#heartbeat;
      // Without evidence that the owner is gone, not for a lease after the database was away.
      if (
        !heartbeat || this.#stopped ||
        (gone ? heartbeat.reachable !== true : !heartbeat.mayClaim)
      ) {
        return Promise.resolve(false);
      }
      let t = takeovers.get(seen.id);
      if (!t) {
        t = takeOver(
          { journal: this.journal, ownership: this.ownership, rollouts: gw.rollouts },
          seen,
          gone ? heartbeat.silentMs : undefined,
        ).finally(() => takeovers.delete(seen.id));
        takeovers.set(seen.id, t);
      }
      return t;
    };
    // A probe per replica at a time, its answer kept a moment: many held calls ask at once.
    const probes = new Map<string, { at: number; gone: Promise<boolean> }>();
    const found = new Set<string>();
    const gone = (r: { id: string; url: string }) => {
      const known = probes.get(r.id);
      if (known && performance.now() - known.at < 500) return known.gone;
      const probe = {
        at: performance.now(),
        gone: replicaGone(r.url, r.id).then((isGone) => {
          // What it handed to trainers and nobody acknowledged is offered again, once.
          if (isGone && !found.has(r.id)) {
            found.add(r.id);
            this.requests.redeliverFrom(r.id).catch(() => found.delete(r.id));
          }
          return isGone;
        }),
      };
      probes.set(r.id, probe);
      return probe.gone;
    };
    // Who beats, read at most once a second for all the calls waiting on an owner.
    let beats: { at: number; ids: Promise<Set<string>> } | undefined;
    const beating = () => {
      if (!beats || performance.now() - beats.at > 1_000) {
        const ids = this.replicas.beating(2 * beatMs).catch(() => new Set<string>([]));
        beats = { at: performance.now(), ids };
      }
      return beats.ids;
    };
    const holds = (id: string) =>
      gw.rollouts.get(id) !== undefined && this.journal.epochOf(id) !== undefined;
    // A turn waits for its request while the runner knows it (from its start, or its relaunch by
    // a takeover, until it settles); a rollout not held, or being taken over, may still have one.
    this.requests.awaited = (rid, rollout) =>
      !holds(rollout) || takeovers.has(rollout) || gw.rollouts.awaits(rid);
    const applyPause = (paused: boolean) => paused ? gw.rollouts.pause() : gw.rollouts.resume();
    // The heartbeat has a connection of its own: it must not wait behind the replica's work
    // (after the database was away, queued writes go first; a late beat loses the leases).
    const beat = postgres(this.o.databaseUrl, poolOptions(1, 5));
    this.#onStop.push(() => void beat.end({ timeout: 1 }).catch(() => {}));
    this.#heartbeat = new Heartbeat({
      replicas: new ReplicaRows(beat, this.replica, this.o.advertiseUrl),
      journal: this.journal,
      ownership: new OwnershipRows(beat, this.replica, this.o.advertiseUrl, leaseMs),
      beatMs,
      paused: applyPause,
      adopt: async (orphan, isGone) => {
        const owner = await this.ownership.lookup({ id: orphan.id });
        if (owner && (isGone || !owner.live)) await take(owner, isGone);
      },
      gone,
      onFenced: (lost) =>
        this.#stop(
          `rollout(s) ${
            lost.slice(0, 5).join(", ")
          } were taken over by another replica while this one stalled`,
        ),
    });
    const watchWriter = setInterval(() => {
      const failure = gw.rollouts.journalFailure;
      if (failure) this.#stop(failure.message);
    }, 500);
    this.#onStop.push(() => clearInterval(watchWriter));
    const listen = async (channel: string, on: (payload: string) => void) => {
      this.#listening.push(await this.sql.listen(channel, on));
    };
    await listen(replicaChannel(this.replica), (p) => {
      if (p.startsWith("resolved:")) this.requests.resolved(p.slice(9)).catch(() => {});
    });
    await listen(QUEUE_CHANNEL, () => this.requests.wake());
    await listen(SAMPLES_CHANNEL, () => gw.rollouts.samplesLogged());
    await listen(PAUSE_CHANNEL, (p) => applyPause(p === "paused"));
    await this.#heartbeat.start();
    return clusterFront({
      replica: this.replica,
      adminToken: this.o.adminToken,
      limits: gw.limits,
      keepAliveMs: DEFAULT_KEEPALIVE_MS,
      streamHeadHoldMs: STREAM_HEAD_HOLD_MS,
      holdMs: leaseMs + TAKEOVER_MS,
      local: async (req, info) => await gw.app.fetch(req, info as object),
      holds,
      lookup: (by) => this.ownership.lookup(by),
      beating: async (id) => (await beating()).has(id),
      takeOver: take,
      takingOver: (id) => takeovers.get(id),
      gone,
      reserve: async (id) => {
        const epoch = await this.ownership.reserve(id);
        if (epoch !== undefined) this.journal.own(id, epoch);
        return epoch;
      },
      unreserve: async (id) => {
        this.journal.disown(id);
        await this.ownership.unreserve(id);
      },
      setPaused: (paused) => this.replicas.setPaused(paused),
      peers: () => this.replicas.peers(leaseMs),
      request: (rid) => this.requests.local(rid),
      unheld: (rid) => this.requests.reap(rid).catch(() => {}),
      tokenHash,
    });
  }

  readonly #onStop: (() => void)[] = [];

  #stop(reason: string): void {
    if (this.#stopped) return;
    this.#stopped = true;
    // It takes nothing over from here on (what it holds is stale; it is about to exit).
    this.#heartbeat?.stop();
    console.error(`rollgate: replica ${this.replica} stops: ${reason}`);
    this.o.stop(reason);
  }

  async #fetchRequest(url: string, rid: string) {
    const res = await fetch(
      `${url.replace(/\/$/, "")}/_cluster/requests/${encodeURIComponent(rid)}`,
      {
        headers: this.o.adminToken ? { authorization: `Bearer ${this.o.adminToken}` } : {},
        signal: AbortSignal.timeout(5_000),
      },
    );
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = await res.json();
    const { ids_encoding: _, prompt_ids, ...rest } = body;
    return { ...rest, prompt_ids: idsFromBase64(prompt_ids) };
  }

  /**
   * Stops the heartbeat, hands this replica's rollouts over (its row and leases gone, the others
   * may take them at once instead of a lease later) and closes the database connections.
   */
  async close(): Promise<void> {
    this.#heartbeat?.stop();
    this.requests.close();
    for (const f of this.#onStop) f();
    for (const l of this.#listening) await l.unlisten().catch(() => {});
    await this.journal.flushed();
    await this.replicas.leave().catch(() => {});
    await this.ownership.release().catch(() => {});
    await this.sql.end({ timeout: 2 }).catch(() => {});
  }
}
