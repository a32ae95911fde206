/**
 * The turns in flight and the bounds on them: admission (how many turns may wait, per rollout
 * and in all; how long a history may be), the count of turns registered and not yet settled, and
 * a shutdown's drain (`close` refuses new turns, `whenIdle` waits for the rest). It never touches
 * a turn's contents; the runner asks it before a turn starts and tells it when one is registered.
 *
 * @module
 */
import type { CanonicalRequest } from "../../canonical/mod.ts";
import type { Rollout } from "../rollout.ts";
import { type OpenTurn, refuse } from "./turn_record.ts";
import { TurnError } from "../turn_error.ts";
import type { TurnObserver } from "./turn_observer.ts";

/** Bounds on what agents may ask of the gateway; each has a default. */
export interface TurnLimits {
  /** Turns of one rollout waiting for their answer at once. */
  maxPendingPerRollout: number;
  /** Turns of all rollouts waiting for their answer at once. */
  maxPending: number;
  /** Messages in one request's history. */
  maxHistoryMessages: number;
}

export const DEFAULT_TURN_LIMITS: Readonly<TurnLimits> = {
  maxPendingPerRollout: 64,
  maxPending: 4096,
  maxHistoryMessages: 20_000,
};

/** An empty conversation would send the policy a bare generation prompt; the APIs refuse it too. */
export function requireMessages(req: CanonicalRequest): void {
  if (req.messages.length === 0) {
    throw new TurnError(
      "invalid_request",
      "the request has no messages: at least one message is required",
    );
  }
}

/** A finished rollout takes no more turns. */
export function requireActive(rollout: Rollout): void {
  if (rollout.status !== "active") {
    throw new TurnError(
      "rollout_finished",
      `rollout ${rollout.id} is finished and takes no more turns`,
    );
  }
}

export class TurnFlight {
  readonly limits: TurnLimits;
  /** Turns registered and not yet settled (recorded or failed, and durable). */
  readonly #inFlight = new Set<OpenTurn>();
  /** Turns in flight, per rollout id. */
  readonly #pending = new Map<string, number>();
  #idle: (() => void)[] = [];
  /** Set by `close`: why new turns are refused. */
  #closed: string | undefined;

  constructor(limits: Partial<TurnLimits> = {}, readonly observer?: TurnObserver) {
    this.limits = { ...DEFAULT_TURN_LIMITS, ...limits };
  }

  /** Turns waiting for their answer (of one rollout, or of all). */
  pending(rolloutId?: string): number {
    return rolloutId === undefined ? this.#inFlight.size : this.#pending.get(rolloutId) ?? 0;
  }

  /** The turns in flight now (a copy: settling one while iterating is fine). */
  open(): OpenTurn[] {
    return [...this.#inFlight];
  }

  /**
   * Takes no new turns from now on: each is refused with a `shutting_down` {@link TurnError}
   * carrying `reason`. Turns in flight go on, and a client's retry still reaches its turn.
   */
  close(reason: string): void {
    this.#closed = reason;
  }

  /** Fails a just-registered turn when the runner is closed. */
  refuseWhenClosed(open: OpenTurn): void {
    if (this.#closed !== undefined) throw refuse(open, "shutting_down", this.#closed);
  }

  /** Resolves once no turn is in flight. */
  whenIdle(): Promise<void> {
    if (this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  requireHistoryLimit(req: CanonicalRequest): void {
    const max = this.limits.maxHistoryMessages;
    if (req.messages.length > max) {
      throw new TurnError(
        "history_too_large",
        `the history has ${req.messages.length} messages; the gateway accepts at most ${max} (--max-history-messages)`,
      );
    }
  }

  /** Refuses a new turn when too many wait already (the agent retries a 429 later). */
  admit(rollout: Rollout): void {
    const { maxPendingPerRollout, maxPending } = this.limits;
    if (this.pending(rollout.id) >= maxPendingPerRollout) {
      throw new TurnError(
        "too_many_pending",
        `rollout ${rollout.id} already has ${maxPendingPerRollout} turns waiting for an answer (--max-pending-per-rollout); retry later`,
      );
    }
    if (this.#inFlight.size >= maxPending) {
      throw new TurnError(
        "too_many_pending",
        `the gateway already has ${maxPending} turns waiting for an answer (--max-pending); retry later`,
      );
    }
  }

  /**
   * Counts a registered turn in flight until it settles (its waiters answered): the admission
   * limits and a shutdown's drain see it, and the observer too when `backend` is named (a turn
   * replayed from the journal is not served again by this process).
   */
  track(open: OpenTurn, backend?: string): OpenTurn {
    const { rollout } = open;
    this.#pending.set(rollout.id, this.pending(rollout.id) + 1);
    this.#inFlight.add(open);
    if (backend !== undefined) this.observer?.turnStarted(backend);
    const settled = (error?: unknown) => {
      this.#inFlight.delete(open);
      const n = this.pending(rollout.id) - 1;
      if (n > 0) this.#pending.set(rollout.id, n);
      else this.#pending.delete(rollout.id);
      if (backend !== undefined) {
        this.observer?.turnEnded({
          backend,
          turn: open.turn,
          addedMs: performance.now() - open.startedAt - open.backendMs,
          ...(error === undefined ? {} : { error }),
        });
      }
      if (this.#inFlight.size === 0) { for (const resolve of this.#idle.splice(0)) resolve(); }
    };
    open.turn.result.then(() => settled(), settled);
    return open;
  }
}
