/**
 * The trainers' long polls waiting on one replica, served together: each look claims, in one
 * statement per rollout filter and lease the waiting polls ask for, as many requests as polls wait
 * with them, and hands them to the oldest polls first; so thousands of idle long polls cost one
 * statement a second, not one each, and a request queued costs one claim. A look runs when a request was queued (every replica is told) and every second while any
 * poll waits (notifications are lost across a reconnect; deadlines pass).
 *
 * @module
 */
import type { PendingRequest } from "../generation/mod.ts";

/** A request claimed for a poll, with its owner (whose prompt it is). */
export interface Claimed {
  request_id: string;
  owner: string;
  owner_url: string;
}

export interface LongPollsOptions {
  /** Claims up to `limit` requests, in the order they are to be handed out. */
  claim(rollout: string | undefined, leaseMs: number, limit: number): Promise<Claimed[]>;
  /** The claimed request's prompt; null or undefined when its owner does not hand it over. */
  request(claimed: Claimed): Promise<PendingRequest | null | undefined>;
  /** A claimed request that was not handed over is offered again a second later. */
  release(requestId: string): Promise<void>;
}

interface LongPoll {
  rollout: string | undefined;
  leaseMs: number;
  done: boolean;
  settle(r: PendingRequest | null): void;
  fail(e: Error): void;
}

export class LongPolls {
  readonly #polls = new Set<LongPoll>();
  #serving = false;
  #again = false;

  constructor(readonly o: LongPollsOptions) {}

  /**
   * The oldest poll waiting for a request of `rollout` (or of any), taken out of the waiting
   * ones: `give` it the request queued for it (null: none after all, it answers empty).
   */
  take(rollout: string): { leaseMs: number; give(r: PendingRequest | null): void } | undefined {
    for (const poll of this.#polls) {
      if (poll.done || (poll.rollout !== undefined && poll.rollout !== rollout)) continue;
      this.#polls.delete(poll);
      const give = (r: PendingRequest | null) => {
        // It ended meanwhile (its wait was over, its trainer left): offered again a second later.
        if (poll.done) {
          if (r) void this.o.release(r.request_id).catch(() => {});
        } else poll.settle(r);
      };
      return { leaseMs: poll.leaseMs, give };
    }
    return undefined;
  }

  /** Claims for the waiting polls now (or right after the look under way). */
  look(): void {
    if (this.#polls.size > 0) void this.#serve();
  }

  /** The oldest request (of `rollout`, if given) claimed within `waitMs`, or null. */
  wait(
    waitMs: number,
    rollout: string | undefined,
    signal: AbortSignal | undefined,
    leaseMs: number,
  ): Promise<PendingRequest | null> {
    return new Promise<PendingRequest | null>((resolve, reject) => {
      if (signal?.aborted) return resolve(null);
      const end = () => {
        poll.done = true;
        this.#polls.delete(poll);
        clearTimeout(timer);
        signal?.removeEventListener("abort", gone);
      };
      const poll: LongPoll = {
        rollout,
        leaseMs,
        done: false,
        settle: (r) => {
          end();
          resolve(r);
        },
        fail: (e) => {
          end();
          reject(e);
        },
      };
      const gone = () => poll.settle(null);
      const timer = setTimeout(() => poll.settle(null), waitMs);
      signal?.addEventListener("abort", gone, { once: true });
      this.#polls.add(poll);
      void this.#serve();
    });
  }

  async #serve(): Promise<void> {
    if (this.#serving) {
      this.#again = true;
      return;
    }
    this.#serving = true;
    try {
      do {
        this.#again = false;
        // The waiting polls by what they ask for, oldest first in each group.
        const groups = new Map<string, LongPoll[]>();
        for (const poll of this.#polls) {
          const key = `${poll.leaseMs} ${poll.rollout ?? ""}`;
          const group = groups.get(key);
          if (group) group.push(poll);
          else groups.set(key, [poll]);
        }
        for (const polls of groups.values()) {
          const { rollout, leaseMs } = polls[0];
          const claimed = await this.o.claim(rollout, leaseMs, polls.length);
          let next = 0;
          for (const c of claimed) {
            const request = await this.o.request(c);
            while (next < polls.length && polls[next].done) next++;
            const poll = polls[next];
            // Its owner does not hold it yet (a takeover is restoring it) or did not answer, or
            // its polls ended meanwhile: it is offered again a second later.
            if (!request || !poll) {
              await this.o.release(c.request_id);
              continue;
            }
            poll.settle(request);
          }
        }
      } while (this.#again);
    } catch (e) {
      for (const poll of this.#polls) poll.fail(e as Error);
    } finally {
      this.#serving = false;
    }
  }
}
