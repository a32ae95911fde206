/**
 * The trainers' long polls waiting on one replica, served together: each look claims, in one
 * statement per rollout filter and lease the waiting polls ask for, as many requests as polls wait
 * with them, and hands them to the oldest polls first; so thousands of idle long polls cost one
 * statement a second, not one each, and a request queued costs one claim; a poll that takes
 * requests leased claims them leased in that statement. A look runs when a request was queued
 * (every replica is told) and every second while any poll waits (notifications are lost across a
 * reconnect; deadlines pass).
 *
 * @module
 */
import type { HandedRequest, PendingRequest } from "../generation/mod.ts";

/** A request claimed for a poll, with its owner (whose prompt it is). */
export interface Claimed {
  request_id: string;
  owner: string;
  owner_url: string;
  /** Claimed leased: when the lease runs out (ms since the epoch). */
  expires?: number;
}

/** What a waiting poll asks for: requests of one rollout (or any), with this lease, leased. */
export interface PollAsks {
  rollout: string | undefined;
  leaseMs: number;
  /** Handed out already leased (`next` with `ack`), not to be acknowledged. */
  leased: boolean;
}

export interface LongPollsOptions {
  /** Claims up to `limit` requests, in the order they are to be handed out. */
  claim(asks: PollAsks, limit: number): Promise<Claimed[]>;
  /** The claimed request's prompt; null or undefined when its owner does not hand it over. */
  request(claimed: Claimed): Promise<PendingRequest | null | undefined>;
  /** A claimed request that was not handed over is offered again a second later. */
  release(requestId: string): Promise<void>;
}

interface LongPoll extends PollAsks {
  done: boolean;
  settle(r: HandedRequest | null): void;
  fail(e: Error): void;
}

/** The request as a poll gets it: with its lease when it was claimed leased. */
export function handed(
  request: PendingRequest,
  expires: number | undefined,
  leaseMs: number,
): HandedRequest {
  if (expires === undefined) return request;
  return {
    ...request,
    lease: { request_id: request.request_id, lease_ms: leaseMs, expires_at: expires },
  };
}

export class LongPolls {
  readonly #polls = new Set<LongPoll>();
  /** The look under way; it runs again (`#again`) for polls that came during it. */
  #serving: Promise<void> | undefined;
  #again = false;

  constructor(readonly o: LongPollsOptions) {}

  /**
   * The oldest poll waiting for a request of `rollout` (or of any), taken out of the waiting
   * ones: `give` it the request queued for it (null: none after all, it answers empty).
   */
  take(rollout: string): (PollAsks & { give(r: HandedRequest | null): void }) | undefined {
    for (const poll of this.#polls) {
      if (poll.done || (poll.rollout !== undefined && poll.rollout !== rollout)) continue;
      this.#polls.delete(poll);
      const give = (r: HandedRequest | null) => {
        // It ended meanwhile (its wait was over, its trainer left): offered again a second later.
        if (poll.done) {
          if (r) void this.o.release(r.request_id).catch(() => {});
        } else poll.settle(r);
      };
      return { rollout: poll.rollout, leaseMs: poll.leaseMs, leased: poll.leased, give };
    }
    return undefined;
  }

  /** Claims for the waiting polls now (or right after the look under way). */
  look(): void {
    if (this.#polls.size > 0) void this.#serve();
  }

  /** The oldest request (of `asks.rollout`, if given) claimed within `waitMs`, or null. */
  wait(
    waitMs: number,
    asks: PollAsks,
    signal: AbortSignal | undefined,
  ): Promise<HandedRequest | null> {
    return new Promise<HandedRequest | null>((resolve, reject) => {
      if (signal?.aborted) return resolve(null);
      const end = () => {
        poll.done = true;
        this.#polls.delete(poll);
        clearTimeout(timer);
        signal?.removeEventListener("abort", gone);
      };
      const poll: LongPoll = {
        ...asks,
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
      // A poll that does not wait (a batch's further requests) still gets one look's claim.
      const timer = waitMs > 0 ? setTimeout(() => poll.settle(null), waitMs) : undefined;
      signal?.addEventListener("abort", gone, { once: true });
      this.#polls.add(poll);
      const look = this.#serve();
      if (waitMs <= 0) void look.then(() => poll.settle(null));
    });
  }

  #serve(): Promise<void> {
    if (this.#serving) {
      this.#again = true;
      return this.#serving;
    }
    this.#serving = this.#look().finally(() => this.#serving = undefined);
    return this.#serving;
  }

  async #look(): Promise<void> {
    try {
      do {
        this.#again = false;
        // The waiting polls by what they ask for, oldest first in each group.
        const groups = new Map<string, LongPoll[]>();
        for (const poll of this.#polls) {
          const key = `${poll.leased} ${poll.leaseMs} ${poll.rollout ?? ""}`;
          const group = groups.get(key);
          if (group) group.push(poll);
          else groups.set(key, [poll]);
        }
        for (const polls of groups.values()) {
          const { rollout, leaseMs, leased } = polls[0];
          const claimed = await this.o.claim({ rollout, leaseMs, leased }, polls.length);
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
            poll.settle(handed(request, c.expires, leaseMs));
          }
        }
      } while (this.#again);
    } catch (e) {
      for (const poll of this.#polls) poll.fail(e as Error);
    }
  }
}
