/**
 * Why a request could not become a turn, in the domain's words. The gateway maps each kind to an
 * HTTP status (`gateway/http_errors.ts`); nothing below the gateway knows about HTTP.
 *
 * @module
 */

export type TurnErrorKind =
  /** The request itself cannot be a turn (e.g. no messages). */
  | "invalid_request"
  /** The chat template could not render the conversation. */
  | "render_failed"
  /** The prompt does not fit the model's context. */
  | "context_exceeded"
  /** The rollout is finished and takes no more turns. */
  | "rollout_finished"
  /** The request's history has more messages than the gateway accepts. */
  | "history_too_large"
  /** Too many turns wait for an answer already (of the rollout, or of the gateway). */
  | "too_many_pending"
  /** The gateway is shutting down: it finishes the turns it has and takes no new ones. */
  | "shutting_down"
  /** The request's images could not be stored (a full disk, the database away): retry it. */
  | "image_store_failed";

export class TurnError extends Error {
  override name = "TurnError";
  constructor(readonly kind: TurnErrorKind, message: string) {
    super(message);
  }
}
