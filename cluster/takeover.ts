/**
 * Taking over one rollout whose owner is gone: claim it (one conditional update raising the
 * epoch), then rebuild it from its events with the journal's own restore path, through the façade
 * (`RolloutActions.adopt`). Its waiting turns are launched
 * again under their request ids: a completion accepted before the owner died is served to
 * them, a trainer's lease on a request is kept.
 *
 * @module
 */
import type {
  Journal,
  JournaledRollout,
  JournalEvent,
  LoggedSample,
  RolloutActions,
  Sample,
} from "../trajectory/mod.ts";
import type { PgJournal } from "../journal/mod.ts";
import type { Owner, Ownership } from "./ownership.ts";

/** The journal as a restore of one rollout sees it. */
class OneRollout implements Journal {
  constructor(readonly journal: PgJournal, readonly id: string) {}
  record(event: JournalEvent): Promise<void> {
    return this.journal.record(event);
  }
  finish(
    event: Parameters<Journal["finish"]>[0],
    samples: readonly Sample[],
  ): Promise<number[]> {
    return this.journal.finish(event, samples);
  }
  forget(rollout: string): Promise<void> {
    return this.journal.forget(rollout);
  }
  expire(rollout: string): Promise<void> {
    return this.journal.expire(rollout);
  }
  rollouts(): Promise<JournaledRollout[]> {
    return this.journal.describe([this.id]);
  }
  events(rollout: string): AsyncIterable<JournalEvent> {
    return this.journal.events(rollout);
  }
  append(samples: readonly Sample[]): Promise<number[]> {
    return this.journal.append(samples);
  }
  after(cursor: number, limit: number): Promise<LoggedSample[]> {
    return this.journal.after(cursor, limit);
  }
  oldest(): Promise<number> {
    return this.journal.oldest();
  }
  newest(): Promise<number> {
    return this.journal.newest();
  }
  putRows(...args: Parameters<Journal["putRows"]>): Promise<void> {
    return this.journal.putRows(...args);
  }
  readRows(...args: Parameters<Journal["readRows"]>): Uint8Array | null {
    return this.journal.readRows(...args);
  }
  loadRows(...args: Parameters<PgJournal["loadRows"]>): Promise<() => void> {
    return this.journal.loadRows(...args);
  }
  putImage(hash: string, bytes: Uint8Array): Promise<void> {
    return this.journal.putImage(hash, bytes);
  }
  readImage(hash: string): Promise<Uint8Array | null> {
    return this.journal.readImage(hash);
  }
  close(): void {}
}

export interface TakeoverParts {
  journal: PgJournal;
  ownership: Ownership;
  /** The gateway's façade: the rollout is restored into it (`RolloutActions.adopt`). */
  rollouts: RolloutActions;
}

/**
 * Claims `seen` (as last read) and restores it here; false when another replica moved first
 * or its owner renewed meanwhile.
 */
export async function takeOver(p: TakeoverParts, seen: Owner): Promise<boolean> {
  const epoch = await p.ownership.claim(seen.id, seen.epoch);
  if (epoch === undefined) return false;
  p.journal.own(seen.id, epoch);
  try {
    const report = await p.rollouts.adopt(new OneRollout(p.journal, seen.id), seen.id);
    console.log(
      `rollgate: took over rollout ${seen.id} (epoch ${epoch}) from replica ${seen.owner}: ${report.turns} turn(s), ${report.requeued} request(s) waiting, in ${
        report.ms.toFixed(0)
      } ms`,
    );
    return true;
  } catch (e) {
    p.journal.disown(seen.id);
    throw e;
  }
}
