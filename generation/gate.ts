/**
 * The interception gate: every turn becomes a pending request that a trainer worker takes with a
 * long poll and resolves with the ids its own inference engine produced. The agent's HTTP request
 * stays open meanwhile.
 *
 * Delivery cannot strand a request. A request handed to a trainer stays its own only until a
 * deadline: the trainer acknowledges it (`ack`) within the ack timeout, which grants a lease, and
 * renews the lease while it works (`append` renews too). When the deadline passes (the long poll's
 * answer was lost on the wire, the worker crashed) the request goes back to the front of the
 * queue. The first completion wins, whoever sends it. A request whose agent is gone, whose turn
 * ran out of time or whose rollout ended is _withdrawn_: it leaves the queue, and a trainer still
 * working on it gets a `withdrawn` error for every later call.
 *
 * @module
 */
import {
  abortError,
  type Completion,
  type GenerationBackend,
  GenerationError,
  type GenerationRequest,
  type VersionRun,
} from "./backend.ts";
import { GateError } from "./gate_error.ts";
import type { GateStats, Lease } from "./gate_reports.ts";
import {
  type CompleteResult,
  type GateCompletion,
  outputPrint,
  type PendingRequest,
  trainerCompletion,
} from "./gate_completion.ts";

/** Timings of delivery; every field has a default. */
export interface GateOptions {
  /** How long a handed-over request waits for its `ack` before it is offered again. */
  ackTimeoutMs?: number;
  /** The lease an `ack` grants when the trainer names none. */
  defaultLeaseMs?: number;
  /** The longest lease a trainer may ask for. */
  maxLeaseMs?: number;
  /** How many finished request ids are remembered, so late calls get 409/410 and not 404. */
  rememberFinished?: number;
}

export const DEFAULT_ACK_TIMEOUT_MS = 10_000;
export const DEFAULT_LEASE_MS = 60_000;
export const MAX_LEASE_MS = 3_600_000;
const DEFAULT_REMEMBER_FINISHED = 100_000;
const AGENT_GONE = "the agent disconnected";

/** Where a request is: waiting in the queue, handed over and not yet acknowledged, or leased. */
export type DeliveryState = "queued" | "delivered" | "leased";

interface Entry {
  request: PendingRequest;
  state: DeliveryState;
  /** How many times it was handed to a trainer. */
  deliveries: number;
  /** The lease an `ack` without one grants (the long poll may name it). */
  leaseMs: number;
  /** Ends the current delivery or lease. */
  deadline?: ReturnType<typeof setTimeout>;
  /** Ids the trainer appended so far (streaming); the completion must start with them. */
  appended: number[];
  /** The weight version of each appended chunk, where it changed. */
  versions: VersionRun[];
  /** What the chain's earlier rows look like (a completion's rows must keep it). */
  routedLike?: GenerationRequest["routedExpertsLike"];
  onTokens?: (ids: number[]) => void;
  resolve(c: Completion): void;
  reject(e: Error): void;
  /** Stops listening to the agent's signal (the listener must not outlive the request). */
  detach(): void;
}

interface Waiter {
  rollout?: string;
  leaseMs: number;
  deliver(r: PendingRequest): void;
}

/** How a request that is no longer pending ended. */
type Outcome = { kind: "resolved"; output?: number } | { kind: "withdrawn"; reason: string };

export class InterceptionGate implements GenerationBackend {
  readonly name = "gate";
  readonly ackTimeoutMs: number;
  readonly defaultLeaseMs: number;
  readonly maxLeaseMs: number;
  readonly #rememberFinished: number;
  readonly #entries = new Map<string, Entry>();
  /** Unclaimed request ids in arrival order. */
  readonly #queue: string[] = [];
  readonly #waiters: Waiter[] = [];
  /** Requests that ended, oldest first, so a late call gets 409 or 410 and not 404. */
  readonly #finished = new Map<string, Outcome>();
  #redelivered = 0;
  #withdrawn = 0;

  constructor(options: GateOptions = {}) {
    this.maxLeaseMs = options.maxLeaseMs ?? MAX_LEASE_MS;
    this.ackTimeoutMs = this.checkLease(options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS);
    this.defaultLeaseMs = this.checkLease(options.defaultLeaseMs ?? DEFAULT_LEASE_MS);
    this.#rememberFinished = options.rememberFinished ?? DEFAULT_REMEMBER_FINISHED;
  }

  /**
   * `leaseMs` if it is a lease this gate grants; a {@link GateError} otherwise. (A timer longer
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

  generate(req: GenerationRequest): Promise<Completion> {
    return new Promise<Completion>((resolve, reject) => {
      if (req.signal?.aborted) return reject(abortError(req.signal, AGENT_GONE));
      const entry: Entry = {
        request: {
          request_id: req.requestId,
          rollout_id: req.rolloutId,
          turn_id: req.turnId,
          prompt_ids: req.promptIds,
          sampling: req.sampling,
          routed_experts_from: req.routedExpertsFrom ?? 0,
        },
        state: "queued",
        deliveries: 0,
        leaseMs: this.defaultLeaseMs,
        appended: [],
        versions: [],
        routedLike: req.routedExpertsLike,
        onTokens: req.onTokens,
        resolve,
        reject,
        detach: () => signal?.removeEventListener("abort", gone),
      };
      const signal = req.signal;
      const gone = () => {
        if (this.#entries.get(req.requestId) !== entry) return;
        const error = abortError(signal!, AGENT_GONE);
        this.#end(req.requestId, { kind: "withdrawn", reason: error.message }).reject(error);
      };
      this.#entries.set(req.requestId, entry);
      signal?.addEventListener("abort", gone, { once: true });
      this.#offer(entry, false);
    });
  }

  /** Hands an unclaimed request to a waiting trainer, or queues it. */
  #offer(entry: Entry, front: boolean): void {
    const w = this.#waiters.findIndex((w) => !w.rollout || w.rollout === entry.request.rollout_id);
    if (w >= 0) {
      const waiter = this.#waiters.splice(w, 1)[0];
      this.#deliver(entry, waiter.leaseMs);
      waiter.deliver(entry.request);
      return;
    }
    entry.state = "queued";
    if (front) this.#queue.unshift(entry.request.request_id);
    else this.#queue.push(entry.request.request_id);
  }

  /** Hands a request over: it is the trainer's until the ack timeout, unless acknowledged. */
  #deliver(entry: Entry, leaseMs: number): void {
    entry.state = "delivered";
    entry.deliveries++;
    entry.leaseMs = leaseMs;
    this.#arm(entry, this.ackTimeoutMs);
  }

  /** (Re)starts the deadline after which the request is offered again. */
  #arm(entry: Entry, ms: number): void {
    clearTimeout(entry.deadline);
    entry.deadline = setTimeout(() => {
      if (this.#entries.get(entry.request.request_id) !== entry) return;
      entry.deadline = undefined;
      this.#redelivered++;
      this.#offer(entry, true);
    }, ms);
  }

  /**
   * Takes the oldest unclaimed request (optionally of one rollout), waiting up to `waitMs`. The
   * request must be acknowledged within the ack timeout; the ack grants `leaseMs` (default: the
   * gate's) unless it names its own.
   */
  next(
    waitMs: number,
    rollout?: string,
    signal?: AbortSignal,
    leaseMs: number = this.defaultLeaseMs,
  ): Promise<PendingRequest | null> {
    this.checkLease(leaseMs);
    const i = this.#queue.findIndex((id) =>
      !rollout || this.#entries.get(id)?.request.rollout_id === rollout
    );
    if (i >= 0) {
      const entry = this.#entries.get(this.#queue.splice(i, 1)[0])!;
      this.#deliver(entry, leaseMs);
      return Promise.resolve(entry.request);
    }
    if (waitMs <= 0 || signal?.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        rollout,
        leaseMs,
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
   * Acknowledges a handed-over request and (re)starts its lease: the trainer calls it once on
   * receipt and again before the lease runs out. A request whose lease ran out is taken back if
   * nobody took it meanwhile.
   */
  ack(requestId: string, leaseMs?: number): Lease {
    const entry = this.#pending(requestId);
    const ms = leaseMs === undefined ? entry.leaseMs : this.checkLease(leaseMs);
    if (entry.state === "queued") {
      const q = this.#queue.indexOf(requestId);
      if (q >= 0) this.#queue.splice(q, 1);
    }
    entry.state = "leased";
    entry.leaseMs = ms;
    this.#arm(entry, ms);
    return { request_id: requestId, lease_ms: ms, expires_at: Date.now() + ms };
  }

  /**
   * Streams sampled ids to the agent before the completion: the trainer appends each chunk as
   * its engine produces it, then completes with the whole output. Renews the lease. A chunk may
   * name the weight version that sampled it (a weight update can fall inside one turn).
   */
  append(requestId: string, ids: number[], version?: string | number): void {
    const entry = this.#pending(requestId);
    this.#checkLength(entry, entry.appended.length + ids.length);
    this.ack(requestId);
    if (version !== undefined && entry.versions.at(-1)?.[1] !== version) {
      entry.versions.push([entry.appended.length, version]);
    }
    for (const id of ids) entry.appended.push(id);
    entry.onTokens?.(ids);
  }

  /**
   * Resolves a request with the trainer's output. Everything is checked before anything changes:
   * a refused completion leaves the request pending as it was. The same output sent again after
   * the request was completed with it (its first answer was lost) is `resent`, not refused.
   */
  complete(requestId: string, completion: GateCompletion): CompleteResult {
    const print = outputPrint(completion.output_ids);
    const done = this.#finished.get(requestId);
    if (done?.kind === "resolved" && done.output === print) return "resent";
    const entry = this.#pending(requestId);
    this.#checkLength(entry, completion.output_ids.length);
    const streamed = entry.appended;
    if (streamed.some((id, i) => completion.output_ids[i] !== id)) {
      throw new GateError(
        "not_appended_prefix",
        `output_ids must start with the ${streamed.length} ids appended to ${requestId}`,
      );
    }
    const resolved = trainerCompletion(
      entry.request,
      streamed.length,
      entry.versions,
      completion,
      entry.routedLike,
    );
    this.#end(requestId, { kind: "resolved", output: print }).resolve(resolved);
    return "completed";
  }

  /** The trainer gives up on a request; `status` is what it asks the agent to get. */
  fail(requestId: string, message: string, status?: number): void {
    this.#pending(requestId);
    this.#end(requestId, { kind: "resolved" })
      .reject(new GenerationError("trainer_failed", message, status));
  }

  /** Withdraws the pending requests of a rollout (deleted, finished, expired): their agents get an error. */
  cancelRollout(rolloutId: string, reason: string): void {
    for (const [id, e] of this.#entries) {
      if (e.request.rollout_id === rolloutId) {
        this.#end(id, { kind: "withdrawn", reason }).reject(
          new GenerationError("cancelled", reason),
        );
      }
    }
  }

  /** Requests not yet resolved (claimed or not). */
  pendingCount(rollout?: string): number {
    let n = 0;
    for (const e of this.#entries.values()) if (!rollout || e.request.rollout_id === rollout) n++;
    return n;
  }

  /** Where a pending request is; `undefined` when it is not pending. */
  stateOf(requestId: string): DeliveryState | undefined {
    return this.#entries.get(requestId)?.state;
  }

  stats(): GateStats {
    const count = (s: DeliveryState) => {
      let n = 0;
      for (const e of this.#entries.values()) if (e.state === s) n++;
      return n;
    };
    return {
      queued: count("queued"),
      delivered: count("delivered"),
      leased: count("leased"),
      redelivered: this.#redelivered,
      withdrawn: this.#withdrawn,
    };
  }

  #checkLength(entry: Entry, length: number): void {
    const max = entry.request.sampling.max_tokens;
    if (length > max) {
      throw new GateError(
        "output_too_long",
        `the output has ${length} ids; request ${entry.request.request_id} allows at most ${max} (max_tokens, within the context left after the prompt)`,
      );
    }
  }

  #pending(requestId: string): Entry {
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

  /** Removes a pending request and remembers how it ended. */
  #end(requestId: string, outcome: Outcome): Entry {
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
