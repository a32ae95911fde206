/**
 * The interception gate: every turn becomes a pending request that a trainer worker takes with a
 * long poll and resolves with the ids its own inference engine produced. The agent's HTTP request
 * stays open meanwhile.
 *
 * Delivery cannot strand a request (`lease_queue.ts`): a request handed to a trainer stays its
 * own only until a deadline; the trainer acknowledges it (`ack`) within the ack timeout, which
 * grants a lease, and renews the lease while it works (`append` renews too); when the deadline
 * passes it goes back to the front of the queue. The first completion wins, whoever sends it. A
 * request whose agent is gone, whose turn ran out of time or whose rollout ended is withdrawn.
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
export type { GateCompletion, PendingRequest } from "./gate_completion.ts";
import {
  type CompleteResult,
  type GateCompletion,
  outputPrint,
  type PendingRequest,
  trainerCompletion,
} from "./gate_completion.ts";
import type { GateStats, Lease } from "./gate_reports.ts";
import {
  type DeliveryState,
  type Entry,
  type Leased,
  type LeaseOptions,
  LeaseQueue,
} from "./lease_queue.ts";
import type { HandedRequest, LeasedNext } from "./request_queue.ts";
export {
  DEFAULT_ACK_TIMEOUT_MS,
  DEFAULT_LEASE_MS,
  type DeliveryState,
  MAX_LEASE_MS,
} from "./lease_queue.ts";

/** Timings of delivery (every field has a default) and the version in force. */
export interface GateOptions extends LeaseOptions {
  /** The weight version in force (the pause gate's): stamped on a request an ack names none for. */
  versionInForce?: () => string | number | undefined;
}

const AGENT_GONE = "the agent disconnected";

/** What the gate keeps per request besides its delivery. */
interface Streamed {
  /** Ids the trainer appended so far (streaming); the completion must start with them. */
  appended: number[];
  /** The weight version of each appended chunk, where it changed. */
  versions: VersionRun[];
  /** The version the first `ack` named, or the one in force then. */
  ackVersion?: string | number;
  /** What the chain's earlier rows look like (a completion's rows must keep it). */
  routedLike?: GenerationRequest["routedExpertsLike"];
  onTokens?: (ids: number[]) => void;
}

export class InterceptionGate implements GenerationBackend {
  readonly name = "gate";
  readonly #queue: LeaseQueue<PendingRequest, Completion, Streamed>;
  readonly #versionInForce: () => string | number | undefined;

  constructor(options: GateOptions = {}) {
    this.#queue = new LeaseQueue(options);
    this.#versionInForce = options.versionInForce ?? (() => undefined);
  }

  get ackTimeoutMs(): number {
    return this.#queue.ackTimeoutMs;
  }
  get defaultLeaseMs(): number {
    return this.#queue.defaultLeaseMs;
  }
  get maxLeaseMs(): number {
    return this.#queue.maxLeaseMs;
  }

  /** `leaseMs` if it is a lease this gate grants; a {@link GateError} otherwise. */
  checkLease(leaseMs: number): number {
    return this.#queue.checkLease(leaseMs);
  }

  generate(req: GenerationRequest): Promise<Completion> {
    return new Promise<Completion>((resolve, reject) => {
      if (req.signal?.aborted) return reject(abortError(req.signal, AGENT_GONE));
      const request: PendingRequest = {
        request_id: req.requestId,
        rollout_id: req.rolloutId,
        turn_id: req.turnId,
        prompt_ids: req.promptIds,
        sampling: req.sampling,
        routed_experts_from: req.routedExpertsFrom ?? 0,
        prompt_base: req.promptBase,
      };
      const streamed: Streamed = {
        appended: [],
        versions: [],
        routedLike: req.routedExpertsLike,
        onTokens: req.onTokens,
      };
      const gone = () => abortError(req.signal!, AGENT_GONE);
      this.#queue.add(request, streamed, { resolve, reject }, req.signal, gone);
    });
  }

  /**
   * Takes the oldest unclaimed request (optionally of one rollout), waiting up to `waitMs`. The
   * request must be acknowledged within the ack timeout; the ack grants `leaseMs` (default: the
   * gate's) unless it names its own. With `leased`, it is handed out acknowledged: leased for
   * `leaseMs` and its weight version fixed as that ack would fix it.
   */
  next(
    waitMs: number,
    rollout?: string,
    signal?: AbortSignal,
    leaseMs?: number,
    leased?: LeasedNext,
  ): Promise<HandedRequest | null> {
    const match = rollout === undefined
      ? undefined
      : (r: PendingRequest) => r.rollout_id === rollout;
    let lease: Lease | undefined;
    const onLease: Leased<PendingRequest, Completion, Streamed> | undefined = leased &&
      ((granted, entry) => {
        lease = granted;
        entry.ackVersion ??= leased.version ?? this.#versionInForce();
      });
    return this.#queue.next(waitMs, match, signal, leaseMs, onLease)
      .then((request) => request && lease ? { ...request, lease } : request);
  }

  /**
   * Acknowledges a handed-over request and (re)starts its lease: the trainer calls it once on
   * receipt and again before the lease runs out. The first acknowledgement fixes the weight
   * version the request is generated under: `version` when the trainer names it, else the
   * version in force.
   */
  ack(requestId: string, leaseMs?: number, version?: string | number): Lease {
    const { lease, entry } = this.#queue.ack(requestId, leaseMs);
    entry.ackVersion ??= version ?? this.#versionInForce();
    return lease;
  }

  /**
   * Streams sampled ids to the agent before the completion: the trainer appends each chunk as
   * its engine produces it, then completes with the whole output. Renews the lease. A chunk may
   * name the weight version that sampled it (a weight update can fall inside one turn).
   */
  append(requestId: string, ids: number[], version?: string | number): void {
    const entry = this.#queue.pending(requestId);
    checkLength(entry, entry.appended.length + ids.length);
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
    if (this.#queue.resolvedWith(requestId, print)) return "resent";
    const entry = this.#queue.pending(requestId);
    checkLength(entry, completion.output_ids.length);
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
      entry.ackVersion,
    );
    this.#queue.resolve(requestId, resolved, print);
    return "completed";
  }

  /** The trainer gives up on a request; `status` is what it asks the agent to get. */
  fail(requestId: string, message: string, status?: number): void {
    this.#queue.reject(requestId, new GenerationError("trainer_failed", message, status));
  }

  /** Withdraws the pending requests of a rollout (deleted, finished, expired): their agents get an error. */
  cancelRollout(rolloutId: string, reason: string): void {
    this.#queue.cancelRollout(rolloutId, reason, (r) => new GenerationError("cancelled", r));
  }

  /** Requests not yet resolved (claimed or not). */
  pendingCount(rollout?: string): number {
    return this.#queue.pendingCount(rollout);
  }

  /** A pending request as handed out (a {@link GateError} when it is not pending). */
  pendingRequest(requestId: string): PendingRequest {
    return this.#queue.pending(requestId).request;
  }

  /** Where a pending request is; `undefined` when it is not pending. */
  stateOf(requestId: string): DeliveryState | undefined {
    return this.#queue.stateOf(requestId);
  }

  stats(): GateStats {
    return this.#queue.stats();
  }
}

function checkLength(entry: Entry<PendingRequest, Completion, Streamed>, length: number): void {
  const max = entry.request.sampling.max_tokens;
  if (length > max) {
    throw new GateError(
      "output_too_long",
      `the output has ${length} ids; request ${entry.request.request_id} allows at most ${max} (max_tokens, within the context left after the prompt)`,
    );
  }
}
