/**
 * Who hears about turns as they start and end, and rollouts as they finish, without taking part in
 * them: the gateway's metrics. It is called synchronously on the turn's (and the finish's) path,
 * so an observer only counts.
 *
 * @module
 */
import type { Turn } from "../turn.ts";
import type { Rollout } from "../rollout.ts";

/** A turn that ended, recorded (`turn.status` "done") or failed. */
export interface EndedTurn {
  /** Name of the backend that served it (`gate`, `vllm`, a black-box upstream, …). */
  backend: string;
  turn: Turn;
  /**
   * Milliseconds the turn spent in the runner outside its backend (rendering, parsing, recording;
   * a pause hold counts as the backend's).
   */
  addedMs: number;
  /** Why it failed; absent when it was recorded. */
  error?: unknown;
}

export interface TurnObserver {
  turnStarted(backend: string): void;
  turnEnded(ended: EndedTurn): void;
  /** A rollout was finished (its reward set, its samples logged). */
  rolloutFinished?(rollout: Rollout): void;
}
