/**
 * The contract for a teacher in on-policy distillation: a model that scores the student's own
 * sampled ids. Given a sequence exactly as the student saw it (a prompt and what it sampled, the
 * ids the gateway recorded), it answers the teacher's logprob of each id at the positions asked
 * for, given the ids before it. Two kinds: a vLLM-compatible server (`vllm_teacher.ts`, its
 * `prompt_logprobs`) and the trainer itself through the trainer API (`teacher_queue.ts`).
 *
 * @module
 */

/** One scoring: the sequence and the ranges of it to score. */
export interface TeacherRequest {
  /** Unique per scoring attempt (the trainer API names requests by it). */
  requestId: string;
  rolloutId: string;
  /** The turns whose sampled ids `positions` cover, in order. */
  turnIds: string[];
  /** The sequence, prompt and sampled ids: a view of the chain's ids, never to be kept. */
  ids: Int32Array;
  /** `[start, end)` ranges of `ids` to score, ascending, none at 0 (it has no context). */
  positions: [number, number][];
  /** Aborted when the score is no longer wanted (the rollout was deleted). */
  signal?: AbortSignal;
}

export interface Teacher {
  /** What rollouts choose it by, and what samples name as their `teacher`. */
  readonly name: string;
  /** Requests sent at once at most (the rest wait); undefined: no bound. */
  readonly concurrency?: number;
  /**
   * The teacher's logprob of `ids[p]` given `ids[0 … p)` for every `p` in `positions`, range
   * after range. Rejects when it cannot say (unreachable, a refusal, an answer that does not
   * line up with the ids): nothing is ever made up.
   */
  score(request: TeacherRequest): Promise<Float64Array>;
}

/** How many positions the ranges hold. */
export function positionCount(positions: readonly [number, number][]): number {
  let n = 0;
  for (const [a, b] of positions) n += b - a;
  return n;
}
