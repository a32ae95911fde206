/**
 * The interception gate of a gateway made of replicas: its pending requests live in PostgreSQL
 * (`pending`), so a trainer on any replica takes, acknowledges, appends to, completes or fails
 * any request; the agent's connection stays on the replica that owns the rollout, which holds
 * the prompt and answers the agent.
 *
 * - The owner (`generate`) inserts the request `queued` and waits; a restored turn finds its row
 *   (and a completion accepted before the crash) under the same request id.
 * - `next` claims the oldest request whose owner is alive with `FOR UPDATE SKIP LOCKED` (a
 *   request whose delivery or lease deadline passed comes first again); the prompt comes from
 *   the owner (`body`), over HTTP when that is another replica.
 * - `complete` and `fail` are one conditional statement each: the request leaves an open state
 *   and the turn's `request_completed`/`request_failed` event is written, in one transaction, or
 *   nothing happens and the caller learns why (409 already resolved, 410 withdrawn). Two trainers
 *   racing on two replicas: exactly one wins.
 * - The owner learns of a resolution by NOTIFY on its channel, and by polling its waiting
 *   requests every second (notifications are not replayed after a reconnect).
 *
 * @module
 */
import type { Sql } from "postgres";
import {
  abortError,
  type CompleteResult,
  type Completion,
  completionKeptSets,
  completionRows,
  type GateCompletion,
  GateError,
  type GateStats,
  GenerationError,
  type GenerationRequest,
  type HandedRequest,
  type Lease,
  type LeasedNext,
  type PendingRequest,
  type RequestQueue,
  withVersionRuns,
} from "../generation/mod.ts";
import {
  ClaimRows,
  completionOf,
  idsOf,
  isConnectionError,
  type Outcome,
  pruneResolvedRequests,
  RequestRows,
} from "../journal/mod.ts";
import { GatewayError } from "../gateway/mod.ts";
import { handed, LongPolls } from "./long_polls.ts";

/** Every this many ticks of the gate's poll (a second each), resolved requests past their retention go. */
const PRUNE_TICKS = 30;

interface Waiting {
  request: PendingRequest;
  /** The chain's earlier token rows (a completion's must keep their dtype and row shape). */
  rowsLike?: GenerationRequest["routedExpertsLike"];
  resolve(c: Completion): void;
  reject(e: Error): void;
  onTokens?: (ids: number[]) => void;
  /** Appended ids already passed to `onTokens`. */
  seen: number;
  settled: boolean;
}

export interface ClusterGateOptions {
  sql: Sql;
  replica: string;
  ackTimeoutMs: number;
  defaultLeaseMs: number;
  maxLeaseMs: number;
  /**
   * A request another replica holds (its prompt), asked of that replica; null when it does not
   * hold it (any more), undefined when it did not answer.
   */
  fetchRequest(ownerUrl: string, requestId: string): Promise<PendingRequest | null | undefined>;
}

export class ClusterGate implements RequestQueue {
  readonly name = "gate";
  readonly #waiting = new Map<string, Waiting>();
  readonly #poll: ReturnType<typeof setInterval>;
  readonly #table: RequestRows;
  readonly #polls: LongPolls;

  constructor(readonly o: ClusterGateOptions) {
    this.#table = new RequestRows(o.sql, o.replica, o.ackTimeoutMs, o.defaultLeaseMs);
    const claims = new ClaimRows(o.sql, o.replica, o.ackTimeoutMs);
    this.#polls = new LongPolls({
      claim: (a, limit) => claims.claim(a.rollout, a.leaseMs, limit, a.leased),
      request: (c) => this.#request(c.request_id, c.owner, c.owner_url),
      release: (rid) => claims.release(rid),
    });
    // Each replica starts its pruning at its own tick, so they do not all prune at once.
    let tick = Math.floor(Math.random() * PRUNE_TICKS);
    this.#poll = setInterval(() => {
      this.#pollWaiting().catch(() => {});
      this.#polls.look();
      if (++tick % PRUNE_TICKS === 0) pruneResolvedRequests(o.sql).catch(() => {}); // next time
    }, 1000);
  }

  close(): void {
    clearInterval(this.#poll);
  }

  /** The prompt of a request this replica holds, or undefined. */
  local(requestId: string): PendingRequest | undefined {
    return this.#waiting.get(requestId)?.request;
  }

  generate(req: GenerationRequest): Promise<Completion> {
    return new Promise<Completion>((resolve, reject) => {
      if (req.signal?.aborted) return reject(abortError(req.signal, "the agent disconnected"));
      const w: Waiting = {
        request: {
          request_id: req.requestId,
          rollout_id: req.rolloutId,
          turn_id: req.turnId,
          prompt_ids: req.promptIds,
          sampling: req.sampling,
          routed_experts_from: req.routedExpertsFrom ?? 0,
        },
        rowsLike: req.routedExpertsLike,
        resolve,
        reject,
        onTokens: req.onTokens,
        seen: 0,
        settled: false,
      };
      this.#waiting.set(req.requestId, w);
      const gone = () => this.#withdraw(w, abortError(req.signal!, "the agent disconnected"));
      req.signal?.addEventListener("abort", gone, { once: true });
      const settle = (fn: () => void) => {
        req.signal?.removeEventListener("abort", gone);
        this.#waiting.delete(req.requestId);
        fn();
      };
      w.resolve = (c) => settle(() => resolve(c));
      w.reject = (e) => settle(() => reject(e));
      this.#enqueue(w).catch((e) => this.#settle(w, () => w.reject(unreachable(e))));
    });
  }

  /** Queues the request (its turn is durable: the runner generates only once it is). */
  async #enqueue(w: Waiting): Promise<void> {
    const r = w.request;
    // A trainer's long poll waiting here takes it as it is queued.
    const poll = this.#polls.take(r.rollout_id);
    const { inserted, expires } = await this.#table.insert({
      ...r,
      maxTokens: r.sampling.max_tokens,
      rows: { promptLength: r.prompt_ids.length, from: r.routed_experts_from, like: w.rowsLike },
    }, poll).catch((e) => {
      poll?.give(null);
      throw e;
    });
    poll?.give(inserted ? handed(r, expires, poll.leaseMs) : null);
    // A restored turn's request may have been resolved before the crash.
    if (!inserted) await this.resolved(r.request_id);
  }

  #settle(w: Waiting, fn: () => void): void {
    if (w.settled) return;
    w.settled = true;
    fn();
  }

  /** The agent is gone: the request is withdrawn, unless a trainer resolved it first. */
  async #withdraw(w: Waiting, error: GenerationError): Promise<void> {
    if (w.settled) return;
    try {
      const withdrawn = await this.#table.withdraw(w.request.request_id, error.message);
      if (!withdrawn) return void await this.resolved(w.request.request_id);
    } catch { /* the database is away: the request stays for a restore */ }
    this.#settle(w, () => w.reject(error));
  }

  /**
   * Whether a turn of this replica still waits for `requestId` of `rollout`, or may (it does not
   * hold the rollout, or holds it mid-takeover): set by `Cluster.attach`, where the turns are
   * known. Unset, every request counts as awaited and none is reaped.
   */
  awaited: (requestId: string, rollout: string) => boolean = () => true;

  /**
   * Withdraws an open request of a rollout this replica owns that none of its turns waits for:
   * its turn ended while the database was away, and the withdrawal it tried then was lost.
   * Reaped when a trainer's `next` claims it, it is not offered again every second until its
   * rollout ends (ahead of the queued requests, which it would slow down).
   */
  async reap(requestId: string): Promise<void> {
    if (this.#waiting.has(requestId)) return;
    const rollout = await this.#table.openOwnRequest(requestId);
    if (rollout === undefined || this.awaited(requestId, rollout)) return;
    await this.#table.withdraw(requestId, "its turn ended while the database was away");
  }

  /** Reads a request this replica waits on and settles it if it was resolved. */
  async resolved(requestId: string): Promise<void> {
    const w = this.#waiting.get(requestId);
    if (!w || w.settled) return;
    const row = await this.#table.outcome(requestId);
    if (!row) return;
    if (w.onTokens && row.appended.byteLength / 4 > w.seen) {
      const ids = idsOf(row.appended).slice(w.seen);
      w.seen += ids.length;
      w.onTokens(ids);
    }
    const event = row.event;
    if (row.state === "completed" && event?.kind === "request_completed") {
      this.#settle(w, () => w.resolve(ownCompletion(completionOf(event), row)));
    } else if (row.state === "failed" && event?.kind === "request_failed") {
      const { error, status } = event.data;
      this.#settle(
        w,
        () => w.reject(new GenerationError("trainer_failed", error, status ?? undefined)),
      );
    } else if (row.state === "withdrawn") {
      this.#settle(
        w,
        () => w.reject(new GenerationError("cancelled", row.reason ?? "the request was withdrawn")),
      );
    }
  }

  async #pollWaiting(): Promise<void> {
    const ids = [...this.#waiting.keys()];
    if (ids.length === 0) return;
    for (const id of await this.#table.changed(ids)) await this.resolved(id);
  }

  /** A new request was queued (each replica is told): this replica's long polls look. */
  wake(): void {
    this.#polls.look();
  }

  async #request(
    requestId: string,
    owner: string,
    ownerUrl: string,
  ): Promise<PendingRequest | null | undefined> {
    const local = this.#waiting.get(requestId);
    if (local) return local.request;
    if (owner === this.o.replica) {
      await this.reap(requestId).catch(() => {});
      return null;
    }
    return await this.o.fetchRequest(ownerUrl, requestId).catch(() => undefined);
  }

  /** With `leased`, each request is claimed leased in the claim's statement (no version). */
  next(
    waitMs: number,
    rollout?: string,
    signal?: AbortSignal,
    leaseMs: number = this.o.defaultLeaseMs,
    leased?: LeasedNext,
  ): Promise<HandedRequest | null> {
    return this.#guard(() => {
      this.checkLease(leaseMs);
      if (leased) noAckVersion(leased.version);
      return this.#polls.wait(waitMs, { rollout, leaseMs, leased: leased !== undefined }, signal);
    });
  }

  ack(requestId: string, leaseMs?: number, version?: string | number): Promise<Lease> {
    if (leaseMs !== undefined) this.checkLease(leaseMs);
    noAckVersion(version);
    return this.#guard(() => this.#table.ack(requestId, leaseMs));
  }

  append(requestId: string, ids: number[], version?: string | number): Promise<void> {
    return this.#guard(() => this.#table.append(requestId, ids, version));
  }

  /**
   * The trainer's completion, accepted at most once whichever replica it reaches (the same
   * output sent again is `resent`). Its `routed_experts` are checked here first, as one gateway
   * checks them (a bad body is a 400 that changes nothing), then carried to the owner by the
   * request's row.
   */
  complete(requestId: string, c: GateCompletion): Promise<CompleteResult> {
    const { routed_experts: wire, sampling_mask: kept, ...rest } = c;
    // Checked here like one gateway checks them (the request's top_k is the owner's: the rows
    // are as wide as the largest set), then carried in the completion's event.
    const completion: Omit<Completion, "routed_experts"> = rest;
    if (kept) completion.sampling_mask = completionKeptSets(kept, c.output_ids, 0);
    return this.#guard(async () => {
      let rows;
      if (wire) {
        const expected = await this.#table.rowsExpected(requestId, c.output_ids).catch(
          async (e) => {
            if (await this.#table.completedWith(requestId, c.output_ids)) return undefined;
            throw e;
          },
        );
        if (!expected) return "resent";
        rows = completionRows(expected, wire, c.output_ids.length);
      }
      // This replica's own turn waits for it: settled here, no notification and no read back.
      const w = this.#waiting.get(requestId);
      const here = w !== undefined && !w.settled;
      const done = await this.#table.complete(requestId, completion, rows, here);
      if (done === "resent") return "resent";
      if (!here) return "completed";
      if (done.appended > w.seen) {
        await this.resolved(requestId); // ids appended elsewhere it has not seen: read them
        return "completed";
      }
      const { output_ids, logprobs, finish_reason, weight_version, logprobs_mode } = completion;
      const own: Completion = { output_ids, finish_reason };
      if (logprobs) own.logprobs = logprobs;
      if (weight_version !== undefined) own.weight_version = weight_version;
      if (logprobs_mode !== undefined) own.logprobs_mode = logprobs_mode;
      if (completion.sampling_mask) own.sampling_mask = completion.sampling_mask;
      if (rows) own.routed_experts = rows;
      const resolved = withVersionRuns(own, done.appended, done.versions);
      this.#settle(w, () => w.resolve(resolved));
      return "completed";
    });
  }

  fail(requestId: string, error: string, status?: number): Promise<void> {
    return this.#guard(() => this.#table.fail(requestId, error, status));
  }

  pendingCount(rollout?: string): Promise<number> {
    return this.#guard(() => this.#table.pendingCount(rollout));
  }

  stats(): Promise<GateStats> {
    return this.#guard(() => this.#table.stats());
  }

  /** A trainer's call that meets no database gets a 503 it can retry, saying so. */
  async #guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      throw new GatewayError(
        503,
        `the gateway's database is unreachable (${
          (e as Error).message
        }); nothing was changed by this call unless a retry says it was already done; retry`,
      );
    }
  }

  /** Requests a gone replica handed out unacknowledged are offered again at once. */
  redeliverFrom(replica: string): Promise<number> {
    return this.#table.redeliverFrom(replica);
  }

  /** Done by the journal, in the transaction that finishes, deletes or expires the rollout. */
  cancelRollout(): void {}

  checkLease(leaseMs: number): number {
    if (!(Number.isFinite(leaseMs) && leaseMs > 0 && leaseMs <= this.o.maxLeaseMs)) {
      throw new GateError(
        "invalid_lease",
        `lease must be more than 0 and at most ${this.o.maxLeaseMs / 1000} seconds, got ${
          leaseMs / 1000
        }`,
      );
    }
    return leaseMs;
  }
}

/** A completion as the owner's turn takes it: with its routing rows and appended chunks' versions. */
function ownCompletion(completion: Completion, row: Outcome): Completion {
  if (row.routed_dtype && row.routed_shape && row.routed_experts) {
    completion.routed_experts = {
      dtype: row.routed_dtype,
      shape: row.routed_shape,
      bytes: row.routed_experts,
    };
  }
  return withVersionRuns(completion, row.appended.byteLength / 4, row.versions);
}

function unreachable(e: unknown): GenerationError {
  return new GenerationError(
    "engine_failed",
    `the database is unreachable (${(e as Error).message}); retry`,
  );
}

/** Replicas keep no weight version per acknowledgement: a request for one is refused. */
function noAckVersion(version: string | number | undefined): void {
  if (version === undefined) return;
  throw new GateError(
    "unsupported",
    "replicas keep no weight version per ack: append the first ids with their weight_version",
  );
}
