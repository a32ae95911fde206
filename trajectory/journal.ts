/**
 * The journal's contract: what the gateway writes so that a crash loses nothing, and reads back
 * on start. Every change to a rollout is an event, appended in the order it happened and durable
 * before anyone is answered; replaying a rollout's events through the same code that made them
 * rebuilds it exactly (tokens, message tree, chains, pending requests). Finished samples go to the
 * same store with their cursors (the journal is the gateway's {@link SampleLog}).
 *
 * Storage-neutral: `journal/` implements it on SQLite; a shared store (Redis, for several
 * replicas) can implement the same interface.
 *
 * @module
 */
import type { SampleLog } from "./sample_log.ts";
import type { Sample } from "./samples.ts";
import type { TokenRowStore } from "./token_row_store.ts";

/** Number arrays an event carries in binary: token ids, logprobs, masks. */
export type EventArrays = Readonly<Record<string, ArrayLike<number>>>;

/** One change to one rollout. */
export interface JournalEvent {
  rollout: string;
  /** What happened, e.g. `rollout_created`, `turn_registered`, `turn_recorded`. */
  kind: string;
  /** Plain JSON (no large number arrays: those go in `arrays`). */
  data: Record<string, unknown>;
  /** Large number arrays, stored compactly (int32 for ids, float64 for everything else). */
  arrays?: EventArrays;
  /**
   * Values many events repeat (a turn's tool list): stored once by content, given back in place
   * on replay.
   */
  shared?: Record<string, unknown>;
}

/** What the journal knows of a rollout without replaying it. */
export interface JournaledRollout {
  id: string;
  status: "active" | "finished" | "expired";
  /** Milliseconds since the epoch: the last event's time. */
  lastActivity: number;
}

/**
 * Token rows (`routed_experts`) are kept by the journal too, apart from the events: a logged
 * sample refers to them, so a deleted rollout's rows stay while its samples are in the log.
 */
export interface Journal extends SampleLog, TokenRowStore {
  /**
   * Records an event; resolves once it is durable. Call it when the change happens, before any
   * later change: the order of calls is the order of replay.
   */
  record(event: JournalEvent): Promise<void>;
  /** Appends a rollout's finishing event and its samples at once; resolves with their cursors. */
  finish(event: JournalEvent, samples: readonly Sample[]): Promise<number[]>;
  /** Forgets a deleted rollout's events (its samples already streamed stay). */
  forget(rollout: string): Promise<void>;
  /** Marks a rollout expired: kept, but not restored. */
  expire(rollout: string): Promise<void>;
  /** Every rollout not deleted, oldest first. */
  rollouts(): Promise<JournaledRollout[]>;
  /** A rollout's events in order. */
  events(rollout: string): AsyncIterable<JournalEvent>;
  close(): void;
}
