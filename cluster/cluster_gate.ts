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
  type Completion,
  completionKeptSets,
  completionRows,
  type GateCompletion,
  GateError,
  type GateStats,
  GenerationError,
  type GenerationRequest,
  type Lease,
  type PendingRequest,
  type RequestQueue,
  withVersionRuns,
} from "../generation/mod.ts";
import { isConnectionError, unpackArrays } from "../journal/mod.ts";
import { GatewayError } from "../gateway/mod.ts";
import { idsOf, RequestTable } from "./request_table.ts";

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
  /** Waits for the journal's queued writes (a request is offered once its turn is durable). */
  flushed(): Promise<void>;
  /**
   * A request another replica holds (its prompt), asked of that replica; null when it does not
   * hold it (any more), undefined when it did not answer.
   */
  fetchRequest(ownerUrl: string, requestId: string): Promise<PendingRequest | null | undefined>;
}

export class ClusterGate implements RequestQueue {
  readonly name = "gate";
  readonly #waiting = new Map<string, Waiting>();
  readonly #wakeups = new Set<() => void>();
  readonly #poll: ReturnType<typeof setInterval>;
  readonly #table: RequestTable;

  constructor(readonly o: ClusterGateOptions) {
    this.#table = new RequestTable(o.sql, o.replica, o.ackTimeoutMs, o.defaultLeaseMs);
    this.#poll = setInterval(() => this.#pollWaiting().catch(() => {}), 1000);
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

  async #enqueue(w: Waiting): Promise<void> {
    await this.o.flushed();
    const r = w.request;
    const inserted = await this.#table.insert({
      ...r,
      maxTokens: r.sampling.max_tokens,
      rows: { promptLength: r.prompt_ids.length, from: r.routed_experts_from, like: w.rowsLike },
    });
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
    if (row.state === "completed" && row.data) {
      const data = JSON.parse(row.data);
      const arrays = row.arrays ? unpackArrays(row.arrays) : {};
      const completion: Completion = {
        output_ids: arrays.output_ids ?? [],
        finish_reason: data.finish_reason,
      };
      if (arrays.logprobs) completion.logprobs = arrays.logprobs;
      if (data.weight_version !== undefined) completion.weight_version = data.weight_version;
      if (data.logprobs_mode !== undefined) completion.logprobs_mode = data.logprobs_mode;
      if (arrays.sampling_mask) {
        const values = Int32Array.from(arrays.sampling_mask);
        const width = data.sampling_mask_width as number;
        completion.sampling_mask = {
          dtype: "int32",
          shape: [values.length / width, 1, width],
          bytes: new Uint8Array(values.buffer),
        };
      }
      if (row.routed_dtype && row.routed_shape && row.routed_experts) {
        completion.routed_experts = {
          dtype: row.routed_dtype,
          shape: row.routed_shape,
          bytes: row.routed_experts,
        };
      }
      const resolved = withVersionRuns(completion, row.appended.byteLength / 4, row.versions);
      this.#settle(w, () => w.resolve(resolved));
    } else if (row.state === "failed" && row.data) {
      const data = JSON.parse(row.data);
      this.#settle(
        w,
        () => w.reject(new GenerationError("trainer_failed", data.error, data.status ?? undefined)),
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

  /** A new request was queued: one long poll here looks (each replica is told). */
  wake(): void {
    const first = this.#wakeups.values().next();
    if (!first.done) {
      this.#wakeups.delete(first.value);
      first.value();
    }
  }

  /**
   * Claims the oldest request (optionally of one rollout) whose owner is alive, waiting up to
   * `waitMs`.
   */
  async #next(
    waitMs: number,
    rollout: string | undefined,
    signal: AbortSignal | undefined,
    leaseMs: number,
  ): Promise<PendingRequest | null> {
    this.checkLease(leaseMs);
    const deadline = Date.now() + waitMs;
    for (;;) {
      let wake!: () => void;
      const woke = new Promise<void>((r) => wake = r);
      this.#wakeups.add(wake);
      try {
        const claimed = await this.#table.claim(rollout, leaseMs);
        if (claimed) {
          const request = await this.#request(claimed.request_id, claimed.owner, claimed.owner_url);
          if (request) return request;
          // Its owner does not hold it yet (a takeover is restoring it) or did not answer: it
          // is offered again a second later.
          await this.#table.release(claimed.request_id);
        }
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted) return null;
        let timer: ReturnType<typeof setTimeout> | undefined;
        let onAbort: (() => void) | undefined;
        await Promise.race([
          woke,
          new Promise<void>((r) => signal?.addEventListener("abort", onAbort = () => r())),
          // Poll fallback: a notification lost on a reconnect, a deadline that passed.
          new Promise<void>((r) => timer = setTimeout(r, Math.min(left, claimed ? 200 : 1000))),
        ]);
        clearTimeout(timer);
        if (onAbort) signal?.removeEventListener("abort", onAbort);
      } finally {
        this.#wakeups.delete(wake);
      }
    }
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

  next(
    waitMs: number,
    rollout?: string,
    signal?: AbortSignal,
    leaseMs: number = this.o.defaultLeaseMs,
  ): Promise<PendingRequest | null> {
    return this.#guard(() => this.#next(waitMs, rollout, signal, leaseMs));
  }

  ack(requestId: string, leaseMs?: number, version?: string | number): Promise<Lease> {
    if (leaseMs !== undefined) this.checkLease(leaseMs);
    if (version !== undefined) {
      throw new GateError(
        "unsupported",
        "replicas keep no weight version per ack: append the first ids with their weight_version",
      );
    }
    return this.#guard(() => this.#table.ack(requestId, leaseMs));
  }

  append(requestId: string, ids: number[], version?: string | number): Promise<void> {
    return this.#guard(() => this.#table.append(requestId, ids, version));
  }

  /**
   * The trainer's completion, accepted at most once whichever replica it reaches. Its
   * `routed_experts` are checked here first, as one gateway checks them (a bad body is a 400
   * that changes nothing), then carried to the owner by the request's row.
   */
  complete(requestId: string, c: GateCompletion): Promise<void> {
    const { routed_experts: wire, sampling_mask: kept, ...rest } = c;
    // Checked here like one gateway checks them (the request's top_k is the owner's: the rows
    // are as wide as the largest set), then carried in the completion's event.
    const completion: Omit<Completion, "routed_experts"> = rest;
    if (kept) completion.sampling_mask = completionKeptSets(kept, c.output_ids, 0);
    return this.#guard(async () => {
      const rows = wire
        ? completionRows(
          await this.#table.rowsExpected(requestId, c.output_ids),
          wire,
          c.output_ids.length,
        )
        : undefined;
      await this.#table.complete(requestId, completion, rows);
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

function unreachable(e: unknown): GenerationError {
  return new GenerationError(
    "engine_failed",
    `the database is unreachable (${(e as Error).message}); retry`,
  );
}
