/**
 * The journal's contract: what the gateway writes so that a crash loses nothing, and reads back
 * on start. Every change to a rollout is an event, appended in the order it happened and durable
 * before anyone is answered; replaying a rollout's events through the same code that made them
 * rebuilds it exactly (tokens, message tree, chains, pending requests). Finished samples go to the
 * same store with their cursors (the journal is the gateway's {@link SampleLog}).
 *
 * This is the durable store behind the rollout façade (`RolloutActions`), and the one seam to
 * swap it: `journal/` implements it on SQLite; a store shared by several replicas (PostgreSQL)
 * implements the same interface. A store keeps events as given (`rollout`, `kind`, `data` as JSON,
 * `arrays` as numbers, `shared` by content) and gives them back in order; it never interprets
 * `data`, except that `rollout_created` starts a rollout afresh and `finish` marks it finished.
 *
 * @module
 */
import type { JournalEvent, RolloutFinishedEvent } from "./journal_events.ts";
import type { Sample, SampleLog } from "../samples/mod.ts";
import type { TokenRowStore } from "../token_rows/mod.ts";
import type { ImageStore } from "../image_store.ts";

export type { EventArrays, JournalEvent } from "./journal_events.ts";

/** What the journal knows of a rollout without replaying it. */
export interface JournaledRollout {
  id: string;
  status: "active" | "finished" | "expired";
  /** Milliseconds since the epoch: the last event's time. */
  lastActivity: number;
}

/**
 * The durable store of rollout changes and finished samples. Token rows (`routed_experts`) are
 * kept by it too, apart from the events: a logged sample refers to them, so a deleted rollout's
 * rows stay while its samples are in the log. So are the images turns show, by hash
 * (`ImageStore`): samples refer to them, and they stay as long as the journal does.
 */
export interface Journal extends SampleLog, TokenRowStore, ImageStore {
  /**
   * Records an event; resolves once it is durable. Call it when the change happens, before any
   * later change: the order of calls is the order of replay.
   */
  record(event: JournalEvent): Promise<void>;
  /** Appends a rollout's finishing event and its samples at once; resolves with their cursors. */
  finish(event: RolloutFinishedEvent, samples: readonly Sample[]): Promise<number[]>;
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
