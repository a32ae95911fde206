/**
 * The interception gate: every turn becomes a pending request that a trainer worker takes with a
 * long poll and resolves with the ids its own inference engine produced. The agent's HTTP request
 * stays open meanwhile.
 *
 * @module
 */
import {
  type Completion,
  type GenerationBackend,
  GenerationError,
  type GenerationRequest,
  type SamplingRequest,
} from "./backend.ts";

/** What `GET /api/requests/next` hands a trainer. */
export interface PendingRequest {
  request_id: string;
  rollout_id: string;
  turn_id: string;
  prompt_ids: number[];
  sampling: SamplingRequest;
}

interface Entry {
  request: PendingRequest;
  claimed: boolean;
  /** Ids the trainer appended so far (streaming); the completion must start with them. */
  appended: number[];
  onTokens?: (ids: number[]) => void;
  /** Re-queues the request if the claiming trainer does not resolve it in time. */
  lease?: ReturnType<typeof setTimeout>;
  resolve(c: Completion): void;
  reject(e: Error): void;
}

interface Waiter {
  rollout?: string;
  leaseMs: number;
  deliver(r: PendingRequest): void;
}

/** Why an `append`/`complete`/`fail` call was refused. */
export type GateErrorKind =
  /** No such request was ever pending. */
  | "unknown_request"
  /** The request was completed or failed before. */
  | "already_resolved"
  /** The completion does not start with the ids appended before it. */
  | "not_appended_prefix";

export class GateError extends Error {
  override name = "GateError";
  constructor(readonly kind: GateErrorKind, message: string) {
    super(message);
  }
}

export class InterceptionGate implements GenerationBackend {
  readonly name = "gate";
  readonly #entries = new Map<string, Entry>();
  /** Unclaimed request ids in arrival order. */
  readonly #queue: string[] = [];
  readonly #waiters: Waiter[] = [];
  /** Ids that were resolved, so a second completion gets 409 and not 404. */
  readonly #done = new Set<string>();

  generate(req: GenerationRequest): Promise<Completion> {
    return new Promise<Completion>((resolve, reject) => {
      const request: PendingRequest = {
        request_id: req.requestId,
        rollout_id: req.rolloutId,
        turn_id: req.turnId,
        prompt_ids: req.promptIds,
        sampling: req.sampling,
      };
      const entry: Entry = {
        request,
        claimed: false,
        appended: [],
        onTokens: req.onTokens,
        resolve,
        reject,
      };
      this.#entries.set(req.requestId, entry);
      this.#offer(entry, false);
    });
  }

  /** Hands an unclaimed request to a waiting trainer, or queues it. */
  #offer(entry: Entry, front: boolean): void {
    const w = this.#waiters.findIndex((w) => !w.rollout || w.rollout === entry.request.rollout_id);
    if (w >= 0) {
      const waiter = this.#waiters.splice(w, 1)[0];
      this.#claim(entry, waiter.leaseMs);
      waiter.deliver(entry.request);
    } else if (front) {
      this.#queue.unshift(entry.request.request_id);
    } else {
      this.#queue.push(entry.request.request_id);
    }
  }

  /**
   * Marks a request taken. With a lease, a trainer that vanishes (crashed worker, dropped
   * connection) does not strand the agent: the request goes back to the front of the queue.
   */
  #claim(entry: Entry, leaseMs: number): void {
    entry.claimed = true;
    if (leaseMs <= 0) return;
    entry.lease = setTimeout(() => {
      if (this.#entries.get(entry.request.request_id) !== entry) return;
      entry.claimed = false;
      entry.lease = undefined;
      this.#offer(entry, true);
    }, leaseMs);
  }

  /**
   * Takes the oldest unclaimed request (optionally of one rollout), waiting up to `waitMs`.
   * With `leaseMs` > 0 the request returns to the queue unless resolved within that time.
   */
  next(
    waitMs: number,
    rollout?: string,
    signal?: AbortSignal,
    leaseMs = 0,
  ): Promise<PendingRequest | null> {
    const i = this.#queue.findIndex((id) =>
      !rollout || this.#entries.get(id)?.request.rollout_id === rollout
    );
    if (i >= 0) {
      const entry = this.#entries.get(this.#queue.splice(i, 1)[0])!;
      this.#claim(entry, leaseMs);
      return Promise.resolve(entry.request);
    }
    if (waitMs <= 0) return Promise.resolve(null);
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
   * Streams sampled ids to the agent before the completion: the trainer appends each chunk as
   * its engine produces it, then completes with the whole output.
   */
  append(requestId: string, ids: number[]): void {
    const entry = this.#pending(requestId);
    for (const id of ids) entry.appended.push(id);
    entry.onTokens?.(ids);
  }

  complete(requestId: string, completion: Completion): void {
    const entry = this.#pending(requestId);
    const streamed = entry.appended;
    if (streamed.some((id, i) => completion.output_ids[i] !== id)) {
      throw new GateError(
        "not_appended_prefix",
        `output_ids must start with the ${streamed.length} ids appended to ${requestId}`,
      );
    }
    this.#take(requestId).resolve(completion);
  }

  /** The trainer gives up on a request; `status` is what it asks the agent to get. */
  fail(requestId: string, message: string, status?: number): void {
    this.#take(requestId).reject(new GenerationError("trainer_failed", message, status));
  }

  /** Drops the pending requests of a rollout (deleted or finished): their agents get an error. */
  cancelRollout(rolloutId: string, reason: string): void {
    for (const [id, e] of this.#entries) {
      if (e.request.rollout_id === rolloutId) {
        this.#take(id).reject(new GenerationError("cancelled", reason));
      }
    }
  }

  /** Requests not yet resolved (claimed or not). */
  pendingCount(rollout?: string): number {
    let n = 0;
    for (const e of this.#entries.values()) if (!rollout || e.request.rollout_id === rollout) n++;
    return n;
  }

  #pending(requestId: string): Entry {
    const entry = this.#entries.get(requestId);
    if (!entry) {
      if (this.#done.has(requestId)) {
        throw new GateError("already_resolved", `request ${requestId} was already resolved`);
      }
      throw new GateError("unknown_request", `unknown request id ${requestId}`);
    }
    return entry;
  }

  #take(requestId: string): Entry {
    const entry = this.#pending(requestId);
    this.#entries.delete(requestId);
    clearTimeout(entry.lease);
    const q = this.#queue.indexOf(requestId);
    if (q >= 0) this.#queue.splice(q, 1);
    this.#done.add(requestId);
    return entry;
  }
}
