/**
 * The gate's refusals of a trainer's call about a request, by kind (mapped to HTTP at the edge).
 *
 * @module
 */

/** Why a trainer's call about a request was refused. */
export type GateErrorKind =
  /** No such request was ever pending (or it ended too long ago to be remembered). */
  | "unknown_request"
  /** The request was completed or failed before. */
  | "already_resolved"
  /** The request was withdrawn: its agent is gone, its turn timed out or its rollout ended. */
  | "withdrawn"
  /** The completion does not start with the ids appended before it. */
  | "not_appended_prefix"
  /** More ids than the request's `max_tokens` allows. */
  | "output_too_long"
  /** A lease that is not a positive duration within the gate's bound. */
  | "invalid_lease"
  /** `routed_experts` of the wrong shape, length, dtype or encoding. */
  | "invalid_routed_experts"
  /** `sampling_mask` that is not one kept set per output id, each holding the id sampled there. */
  | "invalid_sampling_mask"
  /** A teacher's answer that is not one logprob (≤ 0) per position asked for. */
  | "invalid_logprobs"
  /** A field this queue does not keep (a replicated queue and an ack's weight version). */
  | "unsupported";

export class GateError extends Error {
  override name = "GateError";
  constructor(readonly kind: GateErrorKind, message: string) {
    super(message);
  }
}
