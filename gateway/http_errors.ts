/**
 * The one place where errors become HTTP statuses. The domain below the gateway throws its own
 * errors (`TurnError`, `GenerationError`, `GateError`, `RolloutExistsError`) and knows nothing
 * of HTTP; each gateway surface (agent protocols, trainer API, host tools) gives the status its
 * own body shape and decides what an unexpected error (a 500) says.
 *
 * @module
 */
import {
  GateError,
  type GateErrorKind,
  GenerationError,
  type GenerationErrorKind,
  UnknownTeacherError,
} from "../generation/mod.ts";
import {
  JournalError,
  RolloutExistsError,
  TurnError,
  type TurnErrorKind,
  TurnRewardError,
  type TurnRewardErrorKind,
  UnknownRolloutError,
} from "../trajectory/mod.ts";
import { TemplateSettingError } from "../model/mod.ts";
import { GatewayError } from "./gateway_error.ts";
import { InvalidRequestError } from "./protocol.ts";

const TURN_STATUS: Readonly<Record<TurnErrorKind, number>> = {
  invalid_request: 400,
  render_failed: 400,
  context_exceeded: 400,
  rollout_finished: 409,
  history_too_large: 413,
  too_many_pending: 429,
  // Retryable: Claude Code retries a 503 (overloaded), and a restarted gateway takes the turn.
  shutting_down: 503,
  image_store_failed: 503,
};

const GENERATION_STATUS: Readonly<Record<GenerationErrorKind, number>> = {
  engine_failed: 502,
  engine_timeout: 504,
  trainer_failed: 502,
  cancelled: 409,
  // nginx's "client closed request": nobody reads it, but logs and tests can tell it apart.
  client_gone: 499,
  // Every agent client retries a 503 (Claude Code also in-stream, as `overloaded_error`).
  turn_timeout: 503,
};

const GATE_STATUS: Readonly<Record<GateErrorKind, number>> = {
  unknown_request: 404,
  already_resolved: 409,
  withdrawn: 410,
  not_appended_prefix: 400,
  output_too_long: 400,
  invalid_lease: 400,
  invalid_routed_experts: 400,
  invalid_sampling_mask: 400,
  invalid_logprobs: 400,
  unsupported: 400,
};

const TURN_REWARD_STATUS: Readonly<Record<TurnRewardErrorKind, number>> = {
  unknown_turn: 404,
  turn_not_recorded: 409,
  reward_conflict: 409,
};

/** The HTTP status of a known error; `undefined` for anything unexpected (the caller's 500). */
export function httpStatus(e: unknown): number | undefined {
  if (e instanceof GatewayError) return e.status;
  if (e instanceof TurnError) return TURN_STATUS[e.kind];
  if (e instanceof GenerationError) return e.requestedStatus ?? GENERATION_STATUS[e.kind];
  if (e instanceof GateError) return GATE_STATUS[e.kind];
  if (e instanceof TurnRewardError) return TURN_REWARD_STATUS[e.kind];
  if (e instanceof InvalidRequestError) return 400;
  if (e instanceof TemplateSettingError) return 400;
  if (e instanceof UnknownTeacherError) return 400;
  if (e instanceof RolloutExistsError) return 409;
  if (e instanceof UnknownRolloutError) return e.expired ? 410 : 404;
  // Nothing is answered as kept when the journal could not keep it.
  if (e instanceof JournalError) return 503;
  return undefined;
}
