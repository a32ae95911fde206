/**
 * Taking over one rollout whose owner is gone: claim it (one conditional update raising the
 * epoch), then rebuild it from its events with the journal's own restore path (`restore` of
 * `trajectory/`), into a store of its own so the replay's "do not journal" switch cannot hide
 * another rollout's writes; then it joins the gateway's store. Its waiting turns are launched
 * again under their request ids: a completion accepted before the owner died is served to
 * them, a trainer's lease on a request is kept.
 *
 * @module
 */
import {
  type Journal,
  type JournaledRollout,
  type JournalEvent,
  JournalWriter,
  type LoggedSample,
  restore,
  RolloutStore,
  type Sample,
  type TurnRunner,
} from "../trajectory/mod.ts";
import type { PgJournal } from "../journal/mod.ts";
import type { Owner, Ownership } from "./ownership.ts";

/** The journal as a restore of one rollout sees it. */
class OneRollout implements Journal {
  constructor(readonly journal: PgJournal, readonly id: string) {}
  record(event: JournalEvent): Promise<void> {
    return this.journal.record(event);
  }
  finish(event: JournalEvent, samples: readonly Sample[]): Promise<number[]> {
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
  close(): void {}
}

export interface TakeoverParts {
  journal: PgJournal;
  ownership: Ownership;
  store: RolloutStore;
  runner: TurnRunner;
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
    const scratch = new RolloutStore({
      idleTimeoutMs: p.store.idleTimeoutMs,
      writer: new JournalWriter(p.journal),
      sampleLog: p.store.sampleLog,
    });
    const report = await restore(new OneRollout(p.journal, seen.id), scratch, p.runner);
    const rollout = scratch.get(seen.id);
    if (rollout) p.store.add(rollout);
    else if (report.expired > 0) p.store.markExpired(seen.id, Date.now());
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
