/**
 * A sample's teacher logprobs (on-policy distillation): aligned with `input_ids`, the teacher's
 * logprob of the id the student sampled at each position the sample trains (`loss_mask` 1), NaN
 * (JSON `null`) everywhere else, so no untrained position carries one. A trained turn its teacher
 * gave no score for (unreachable, refused, still scoring at finish) leaves NaN at its positions
 * and is named in `teacher_missing` with the reason: a score is never made up.
 *
 * @module
 */
import type { TurnSpan } from "./sample_facts.ts";

/** A turn's teacher scoring: the teacher's logprob of each of its sampled ids, or why none. */
export type TeacherScore = { logprobs: Float64Array } | { error: string };

/** A trained turn without teacher scores: its sampled ids' positions and why. */
export interface TeacherMissing {
  turn: string;
  start: number;
  end: number;
  reason: string;
}

export interface TeacherFields {
  /** The teacher's name (a rollout has one teacher). */
  teacher: string;
  teacher_logprobs: Float64Array;
  teacher_missing?: TeacherMissing[];
}

/** The teacher fields of a sample with `spans` over `length` ids, from its turns' scorings. */
export function teacherFields(
  teacher: string,
  spans: readonly TurnSpan[],
  length: number,
  scores: ReadonlyMap<string, TeacherScore> | null | undefined,
): TeacherFields {
  const teacher_logprobs = new Float64Array(length).fill(NaN);
  const missing: TeacherMissing[] = [];
  for (const span of spans) {
    if (!span.trained) continue;
    const score = scores?.get(span.turn);
    const expected = span.end - span.output_start;
    if (score && "logprobs" in score && score.logprobs.length === expected) {
      teacher_logprobs.set(score.logprobs, span.output_start);
    } else {
      const reason = score && "error" in score
        ? score.error
        : score
        ? `the teacher scored ${score.logprobs.length} ids of ${expected}`
        : "not scored yet (still scoring when the sample was built)";
      missing.push({ turn: span.turn, start: span.output_start, end: span.end, reason });
    }
  }
  return { teacher, teacher_logprobs, ...(missing.length ? { teacher_missing: missing } : {}) };
}
