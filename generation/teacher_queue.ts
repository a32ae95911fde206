/**
 * The trainer itself as a teacher: scorings become pending teacher requests that a trainer's
 * worker takes through the trainer API (`GET /api/teacher/requests/next?teacher=NAME`), with the
 * gate's queue semantics (`lease_queue.ts`: the ack within the ack timeout, a lease it renews, the
 * request offered again when its deadline passes, the first answer wins), and answers with its
 * own model's logprobs (`complete`) or gives up (`fail`). One queue serves every teacher named
 * `trainer`-backed; a worker polls for its teacher's name.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TeacherQueue } from "./teacher_queue.ts";
 *
 * const queue = new TeacherQueue();
 * const teacher = queue.teacher("big");
 * const scored = teacher.score({
 *   requestId: "tch_1",
 *   rolloutId: "r1",
 *   turnIds: ["r1.0.ab"],
 *   ids: Int32Array.of(5, 6, 7),
 *   positions: [[1, 3]],
 * });
 * const pending = await queue.next(1000, "big");
 * queue.ack(pending!.request_id);
 * queue.complete(pending!.request_id, [-0.5, -1.5]);
 * assert.deepEqual(Array.from(await scored), [-0.5, -1.5]);
 * ```
 *
 * @module
 */
import { abortError, GenerationError } from "./backend.ts";
import { GateError } from "./gate_error.ts";
import type { GateStats, Lease } from "./gate_reports.ts";
import { type LeaseOptions, LeaseQueue } from "./lease_queue.ts";
import { positionCount, type Teacher, type TeacherRequest } from "./teacher.ts";

/** What `GET /api/teacher/requests/next` hands a trainer. */
export interface PendingScore {
  request_id: string;
  rollout_id: string;
  /** The teacher asked (the name a rollout chose). */
  teacher: string;
  turn_ids: string[];
  /** The sequence (a view of the chain's ids, written to the trainer as JSON or base64). */
  input_ids: Int32Array;
  /** `[start, end)` ranges of `input_ids` to score: one logprob per position, in order. */
  positions: [number, number][];
}

const NOT_WANTED = "the score is no longer wanted (its rollout was deleted)";

export class TeacherQueue {
  readonly #queue: LeaseQueue<PendingScore, Float64Array>;

  constructor(options: LeaseOptions = {}) {
    this.#queue = new LeaseQueue(options);
  }

  /** A teacher named `name` whose scorings wait here for a trainer. */
  teacher(name: string): Teacher {
    return { name, score: (req) => this.#enqueue(name, req) };
  }

  #enqueue(teacher: string, req: TeacherRequest): Promise<Float64Array> {
    return new Promise((resolve, reject) => {
      if (req.signal?.aborted) return reject(abortError(req.signal, NOT_WANTED));
      const request: PendingScore = {
        request_id: req.requestId,
        rollout_id: req.rolloutId,
        teacher,
        turn_ids: req.turnIds,
        input_ids: req.ids,
        positions: req.positions,
      };
      const gone = () => abortError(req.signal!, NOT_WANTED);
      this.#queue.add(request, {}, { resolve, reject }, req.signal, gone);
    });
  }

  checkLease(leaseMs: number): number {
    return this.#queue.checkLease(leaseMs);
  }

  /** The oldest unclaimed request of teacher `name` (any when unnamed), waiting up to `waitMs`. */
  next(
    waitMs: number,
    name?: string,
    signal?: AbortSignal,
    leaseMs?: number,
  ): Promise<PendingScore | null> {
    const match = name === undefined ? undefined : (r: PendingScore) => r.teacher === name;
    return this.#queue.next(waitMs, match, signal, leaseMs);
  }

  ack(requestId: string, leaseMs?: number): Lease {
    return this.#queue.ack(requestId, leaseMs).lease;
  }

  /**
   * The trainer's logprobs, one per position of the request's ranges, each at most 0; checked
   * before anything changes (a refused answer leaves the request pending).
   */
  complete(requestId: string, logprobs: number[]): void {
    const { request } = this.#queue.pending(requestId);
    const n = positionCount(request.positions);
    if (logprobs.length !== n || !logprobs.every((lp) => Number.isFinite(lp) && lp <= 0)) {
      throw new GateError(
        "invalid_logprobs",
        `invalid teacher answer: logprobs must hold ${n} numbers ≤ 0 (one per position of positions), got ${logprobs.length}`,
      );
    }
    this.#queue.resolve(requestId, Float64Array.from(logprobs));
  }

  /** The trainer cannot score it: the scoring fails (and is retried by the gateway). */
  fail(requestId: string, message: string): void {
    this.#queue.reject(requestId, new GenerationError("trainer_failed", message));
  }

  pendingCount(): number {
    return this.#queue.pendingCount();
  }

  stats(): GateStats {
    return this.#queue.stats();
  }
}
