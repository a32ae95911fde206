/**
 * What the trainer API drives: the queue of pending requests a trainer takes, acknowledges,
 * appends to, completes or fails. The {@link InterceptionGate} is the queue of one process; a
 * gateway made of several replicas puts it in its shared database (`cluster/`), where the same
 * calls may take a round trip, so each may answer with a promise.
 *
 * @module
 */
import type { GenerationBackend } from "./backend.ts";
import type { GateStats, Lease } from "./gate_reports.ts";
import type { CompleteResult, PendingRequest } from "./gate_completion.ts";
import type { GateCompletion } from "./gate_completion.ts";

/** A request as `next` hands it out: with its `lease` when it was taken leased. */
export type HandedRequest = PendingRequest & { lease?: Lease };

/** `next` hands requests out already leased, as an `ack` with this version would lease them. */
export interface LeasedNext {
  /** The weight version the trainer generates under; default: the one in force. */
  version?: string | number;
}

export interface RequestQueue extends GenerationBackend {
  /**
   * The oldest unclaimed request (optionally of one rollout), waiting up to `waitMs`; with
   * `leased`, leased to the caller for `leaseMs` (or the default) in the same step, no `ack`.
   */
  next(
    waitMs: number,
    rollout?: string,
    signal?: AbortSignal,
    leaseMs?: number,
    leased?: LeasedNext,
  ): Promise<HandedRequest | null>;
  /** `version`: the weight version the trainer generates it under (the first token's). */
  ack(requestId: string, leaseMs?: number, version?: string | number): Lease | Promise<Lease>;
  /**
   * A pending request as handed out, whole (for a trainer that got its prompt as a delta and
   * lacks the ids it extends); a queue that never hands out a delta need not keep it.
   */
  pendingRequest?(requestId: string): PendingRequest | Promise<PendingRequest>;
  /** Streamed ids, sampled under weight `version` when the trainer says. */
  append(requestId: string, ids: number[], version?: string | number): void | Promise<void>;
  /** Accepts a completion once; the same output sent again after it was accepted is `resent`. */
  complete(requestId: string, completion: GateCompletion): CompleteResult | Promise<CompleteResult>;
  fail(requestId: string, message: string, status?: number): void | Promise<void>;
  /** Withdraws a rollout's pending requests (deleted, finished, expired). */
  cancelRollout(rolloutId: string, reason: string): void;
  /** Requests not yet resolved (claimed or not). */
  pendingCount(rollout?: string): number | Promise<number>;
  stats(): GateStats | Promise<GateStats>;
}
