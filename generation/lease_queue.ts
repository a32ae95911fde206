/**
 * Delivery that cannot strand work a trainer takes: the queue behind the interception gate's
 * requests and the trainer-teacher's scoring requests. A waiting item is handed to a trainer's
 * long poll (`next`) and stays its own only until a deadline: the trainer acknowledges it (`ack`)
 * within the ack timeout, which grants a lease, and renews the lease while it works. When the
 * deadline passes (the poll's answer was lost on the wire, the worker crashed) the item goes back
 * to the front of the queue. The first resolution wins, whoever sends it. An item whose waiter is
 * gone or whose rollout ended is _withdrawn_: it leaves the queue, and a trainer still working on
 * it gets a `withdrawn` error for every later call. A long poll may take items already leased
 * (`next` with `leased`): they skip the acknowledgement, and an item whose answer was lost on the
 * way is offered again once that lease lapses instead of after the ack timeout.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LeaseQueue } from "./lease_queue.ts";
 *
 * const queue = new LeaseQueue<{ request_id: string; rollout_id: string }, number>();
 * const answer = new Promise<number>((resolve, reject) =>
 *   queue.add({ request_id: "q1", rollout_id: "r1" }, {}, { resolve, reject })
 * );
 * const taken = await queue.next(1000);
 * queue.ack(taken!.request_id);
 * queue.resolve("q1", 42);
 * assert.equal(await answer, 42);
 * ```
 *
 * @module
 */
import type { GateStats, Lease } from "./gate_reports.ts";
import { GateError } from "./gate_error.ts";

/** Timings of delivery; every field has a default. */
export interface LeaseOptions {
  /** How long a handed-over item waits for its `ack` before it is offered again. */
  ackTimeoutMs?: number;
  /** The lease an `ack` grants when the trainer names none. */
  defaultLeaseMs?: number;
  /** The longest lease a trainer may ask for. */
  maxLeaseMs?: number;
  /** How many finished ids are remembered, so late calls get 409/410 and not 404. */
  rememberFinished?: number;
}

export const DEFAULT_ACK_TIMEOUT_MS = 10_000;
export const DEFAULT_LEASE_MS = 60_000;
export const MAX_LEASE_MS = 3_600_000;
const DEFAULT_REMEMBER_FINISHED = 100_000;

/** What a queued item needs: its id and its rollout's. */
export interface QueuedItem {
  request_id: string;
  rollout_id: string;
}

/** Where an item is: waiting in the queue, handed over and not yet acknowledged, or leased. */
export type DeliveryState = "queued" | "delivered" | "leased";

/** An item in the queue with how it is delivered and settled (`X`: what its owner adds). */
export type Entry<R, V, X> = X & {
  request: R;
  state: DeliveryState;
  /** How many times it was handed to a trainer. */
  deliveries: number;
  /** The lease an `ack` without one grants (the long poll may name it). */
  leaseMs: number;
  /** Ends the current delivery or lease. */
  deadline?: ReturnType<typeof setTimeout>;
  resolve(value: V): void;
  reject(e: Error): void;
  /** Stops listening to the waiter's signal (the listener must not outlive the item). */
  detach(): void;
};

interface Waiter<R, V, X> {
  match?: (request: R) => boolean;
  leaseMs: number;
  leased?: Leased<R, V, X>;
  deliver(r: R): void;
}

/** Called as a long poll takes an item leased (`next`): the lease it was granted. */
export type Leased<R, V, X> = (lease: Lease, entry: Entry<R, V, X>) => void;

/** How an item that is no longer pending ended. */
type Outcome = { kind: "resolved"; output?: number } | { kind: "withdrawn"; reason: string };

export class LeaseQueue<R extends QueuedItem, V, X = Record<never, never>> {
  readonly ackTimeoutMs: number;
  readonly defaultLeaseMs: number;
  readonly maxLeaseMs: number;
  readonly #rememberFinished: number;
  readonly #entries = new Map<string, Entry<R, V, X>>();
  /** Unclaimed ids in arrival order. */
  readonly #queue: string[] = [];
  readonly #waiters: Waiter<R, V, X>[] = [];
  /** Items that ended, oldest first, so a late call gets 409 or 410 and not 404. */
  readonly #finished = new Map<string, Outcome>();
  #redelivered = 0;
  #withdrawn = 0;

  constructor(options: LeaseOptions = {}) {
    this.maxLeaseMs = options.maxLeaseMs ?? MAX_LEASE_MS;
    this.ackTimeoutMs = this.checkLease(options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS);
    this.defaultLeaseMs = this.checkLease(options.defaultLeaseMs ?? DEFAULT_LEASE_MS);
    this.#rememberFinished = options.rememberFinished ?? DEFAULT_REMEMBER_FINISHED;
  }

  /**
   * `leaseMs` if it is a lease this queue grants; a {@link GateError} otherwise. (A timer longer
   * than 2^31 - 1 ms fires at once, so an unbounded lease would redeliver immediately.)
   */
  checkLease(leaseMs: number): number {
    if (!(Number.isFinite(leaseMs) && leaseMs > 0 && leaseMs <= this.maxLeaseMs)) {
      throw new GateError(
        "invalid_lease",
        `lease must be more than 0 and at most ${this.maxLeaseMs / 1000} seconds, got ${
          leaseMs / 1000
        }`,
      );
    }
    return leaseMs;
  }

  /**
   * Queues `request` (or hands it to a waiting trainer), settled through `settle`. When `signal`
   * aborts first, the item is withdrawn and rejected with `gone()`.
   */
  add(
    request: R,
    extra: X,
    settle: { resolve(value: V): void; reject(e: Error): void },
    signal?: AbortSignal,
    gone?: () => Error,
  ): void {
    const onAbort = () => {
      if (this.#entries.get(request.request_id) !== entry) return;
      const error = gone!();
      this.end(request.request_id, { kind: "withdrawn", reason: error.message }).reject(error);
    };
    const entry = {
      ...extra,
      request,
      state: "queued",
      deliveries: 0,
      leaseMs: this.defaultLeaseMs,
      resolve: settle.resolve,
      reject: settle.reject,
      detach: () => signal?.removeEventListener("abort", onAbort),
    } as Entry<R, V, X>;
    this.#entries.set(request.request_id, entry);
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#offer(entry, false);
  }

  /** Hands an unclaimed item to a waiting trainer, or queues it. */
  #offer(entry: Entry<R, V, X>, front: boolean): void {
    const w = this.#waiters.findIndex((w) => !w.match || w.match(entry.request));
    if (w >= 0) {
      const waiter = this.#waiters.splice(w, 1)[0];
      this.#deliver(entry, waiter.leaseMs, waiter.leased);
      waiter.deliver(entry.request);
      return;
    }
    entry.state = "queued";
    if (front) this.#queue.unshift(entry.request.request_id);
    else this.#queue.push(entry.request.request_id);
  }

  /**
   * Hands an item over: it is the trainer's until the ack timeout, unless acknowledged; or, for a
   * poll that takes it `leased`, until the lease lapses, as if acknowledged on the spot.
   */
  #deliver(entry: Entry<R, V, X>, leaseMs: number, leased?: Leased<R, V, X>): void {
    entry.deliveries++;
    entry.leaseMs = leaseMs;
    if (!leased) {
      entry.state = "delivered";
      this.#arm(entry, this.ackTimeoutMs);
      return;
    }
    entry.state = "leased";
    this.#arm(entry, leaseMs);
    const lease = { request_id: entry.request.request_id, lease_ms: leaseMs };
    leased({ ...lease, expires_at: Date.now() + leaseMs }, entry);
  }

  /** (Re)starts the deadline after which the item is offered again. */
  #arm(entry: Entry<R, V, X>, ms: number): void {
    clearTimeout(entry.deadline);
    entry.deadline = setTimeout(() => {
      if (this.#entries.get(entry.request.request_id) !== entry) return;
      entry.deadline = undefined;
      this.#redelivered++;
      this.#offer(entry, true);
    }, ms);
  }

  /**
   * Takes the oldest unclaimed item (optionally one `match` accepts), waiting up to `waitMs`. It
   * must be acknowledged within the ack timeout; the ack grants `leaseMs` (default: the queue's)
   * unless it names its own. With `leased`, the item is taken already leased for `leaseMs`
   * (`leased` is told the lease as it is granted) and needs no ack.
   */
  next(
    waitMs: number,
    match?: (request: R) => boolean,
    signal?: AbortSignal,
    leaseMs: number = this.defaultLeaseMs,
    leased?: Leased<R, V, X>,
  ): Promise<R | null> {
    this.checkLease(leaseMs);
    const i = this.#queue.findIndex((id) => !match || match(this.#entries.get(id)!.request));
    if (i >= 0) {
      const entry = this.#entries.get(this.#queue.splice(i, 1)[0])!;
      this.#deliver(entry, leaseMs, leased);
      return Promise.resolve(entry.request);
    }
    if (waitMs <= 0 || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter<R, V, X> = {
        match,
        leaseMs,
        leased,
        deliver: (r) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", cancel);
          resolve(r);
        },
      };
      const cancel = () => {
        const k = this.#waiters.indexOf(waiter);
        if (k >= 0) this.#waiters.splice(k, 1);
        clearTimeout(timer);
        resolve(null);
      };
      const timer = setTimeout(cancel, waitMs);
      signal?.addEventListener("abort", cancel, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /**
   * Acknowledges a handed-over item and (re)starts its lease: the trainer calls it once on
   * receipt and again before the lease runs out. An item whose lease ran out is taken back if
   * nobody took it meanwhile.
   */
  ack(requestId: string, leaseMs?: number): { lease: Lease; entry: Entry<R, V, X> } {
    const entry = this.pending(requestId);
    const ms = leaseMs === undefined ? entry.leaseMs : this.checkLease(leaseMs);
    if (entry.state === "queued") {
      const q = this.#queue.indexOf(requestId);
      if (q >= 0) this.#queue.splice(q, 1);
    }
    entry.state = "leased";
    entry.leaseMs = ms;
    this.#arm(entry, ms);
    return { lease: { request_id: requestId, lease_ms: ms, expires_at: Date.now() + ms }, entry };
  }

  /**
   * Resolves a pending item with `value` (the first resolution wins); `output` fingerprints what
   * it was resolved with (a resolution sent again is told apart from another, `resolvedWith`).
   */
  resolve(requestId: string, value: V, output?: number): void {
    this.pending(requestId);
    this.end(requestId, { kind: "resolved", output }).resolve(value);
  }

  /** Whether the item was resolved with the fingerprint `output` (remembered like every end). */
  resolvedWith(requestId: string, output: number): boolean {
    const done = this.#finished.get(requestId);
    return done?.kind === "resolved" && done.output === output;
  }

  /** Fails a pending item as resolved: a trainer gave up on it. */
  reject(requestId: string, error: Error): void {
    this.pending(requestId);
    this.end(requestId, { kind: "resolved" }).reject(error);
  }

  /** Withdraws a rollout's pending items (deleted, finished, expired), rejected with `error`. */
  cancelRollout(rolloutId: string, reason: string, error: (reason: string) => Error): void {
    for (const [id, e] of this.#entries) {
      if (e.request.rollout_id === rolloutId) {
        this.end(id, { kind: "withdrawn", reason }).reject(error(reason));
      }
    }
  }

  /** Items not yet resolved (claimed or not). */
  pendingCount(rollout?: string): number {
    let n = 0;
    for (const e of this.#entries.values()) if (!rollout || e.request.rollout_id === rollout) n++;
    return n;
  }

  /** Where a pending item is; `undefined` when it is not pending. */
  stateOf(requestId: string): DeliveryState | undefined {
    return this.#entries.get(requestId)?.state;
  }

  stats(): GateStats {
    const n: Record<DeliveryState, number> = { queued: 0, delivered: 0, leased: 0 };
    for (const e of this.#entries.values()) n[e.state]++;
    return { ...n, redelivered: this.#redelivered, withdrawn: this.#withdrawn };
  }

  /** The pending item, or a {@link GateError} saying it is unknown, resolved or withdrawn. */
  pending(requestId: string): Entry<R, V, X> {
    const entry = this.#entries.get(requestId);
    if (entry) return entry;
    const outcome = this.#finished.get(requestId);
    if (outcome?.kind === "withdrawn") {
      throw new GateError(
        "withdrawn",
        `request ${requestId} was withdrawn (${outcome.reason}); discard its generation`,
      );
    }
    if (outcome) {
      throw new GateError("already_resolved", `request ${requestId} was already resolved`);
    }
    throw new GateError("unknown_request", `unknown request id ${requestId}`);
  }

  /** Removes a pending item and remembers how it ended. */
  end(requestId: string, outcome: Outcome): Entry<R, V, X> {
    const entry = this.#entries.get(requestId)!;
    this.#entries.delete(requestId);
    clearTimeout(entry.deadline);
    entry.detach();
    if (entry.state === "queued") {
      const q = this.#queue.indexOf(requestId);
      if (q >= 0) this.#queue.splice(q, 1);
    }
    if (outcome.kind === "withdrawn") this.#withdrawn++;
    this.#finished.set(requestId, outcome);
    if (this.#finished.size > this.#rememberFinished) {
      this.#finished.delete(this.#finished.keys().next().value!);
    }
    return entry;
  }
}
