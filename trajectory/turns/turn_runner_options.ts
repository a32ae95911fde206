/**
 * What a turn runner is built with: its pause gate, timeouts, limits, observer, journal writer,
 * the turns in flight, and who is told once a turn is recorded.
 *
 * @module
 */
import type { PauseGate } from "../../generation/mod.ts";
import type { Rollout } from "../rollout.ts";
import type { Turn } from "../turn.ts";
import type { JournalWriter } from "../journaling/mod.ts";
import type { TurnObserver } from "./turn_observer.ts";
import type { TurnFlight, TurnLimits } from "./turn_flight.ts";

/** Every wait of a turn ends: how long, by default. */
export const DEFAULT_TURN_TIMEOUT_MS = 600_000;
export const DEFAULT_ABANDON_GRACE_MS = 10_000;

export interface TurnRunnerOptions {
  /** Holds new generations while a trainer syncs weights (`POST /api/pause`). */
  pause?: PauseGate;
  /**
   * Longest time a turn waits for its answer (held by a pause, queued, generating). Past it the
   * generation is withdrawn and the agent gets a `turn_timeout` error, which it may retry.
   */
  turnTimeoutMs?: number;
  /**
   * How long a turn whose every client disconnected keeps its generation, so the agent's retry
   * re-attaches to it; then the generation is withdrawn (the trainer gets `withdrawn`).
   */
  abandonGraceMs?: number;
  limits?: Partial<TurnLimits>;
  /** Told when each turn starts and ends (metrics). */
  observer?: TurnObserver;
  /** Where turns are journaled; default: nowhere. Set by `RolloutActions`. */
  writer?: JournalWriter;
  /** The turns in flight (shared with a restore); default: its own, from `limits`, `observer`. */
  flight?: TurnFlight;
  /** Told once a turn is recorded (teacher scoring starts there, off the turn's path). */
  onRecorded?: (rollout: Rollout, turn: Turn) => void;
}
