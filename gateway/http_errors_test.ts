/**
 * The one mapping of domain errors to HTTP statuses: every kind has the status the README and the
 * agents rely on (Claude Code retries on 5xx overload statuses, a finished rollout is a conflict).
 */
import assert from "node:assert/strict";
import { GateError, GenerationError, UnknownTeacherError } from "../generation/mod.ts";
import { RolloutExistsError, TurnError, TurnRewardError } from "../trajectory/mod.ts";
import { GatewayError } from "./gateway_error.ts";
import { httpStatus } from "./http_errors.ts";
import { InvalidRequestError } from "./protocol.ts";

Deno.test("httpStatus: every domain error kind has its status", () => {
  const cases: [unknown, number | undefined][] = [
    [new TurnError("invalid_request", "x"), 400],
    [new TurnError("render_failed", "x"), 400],
    [new TurnError("context_exceeded", "x"), 400],
    [new TurnError("rollout_finished", "x"), 409],
    [new GenerationError("engine_failed", "x"), 502],
    [new GenerationError("engine_timeout", "x"), 504],
    [new GenerationError("trainer_failed", "x"), 502],
    [new GenerationError("trainer_failed", "x", 529), 529],
    [new GenerationError("cancelled", "x"), 409],
    [new GenerationError("client_gone", "x"), 499],
    [new GateError("unknown_request", "x"), 404],
    [new GateError("already_resolved", "x"), 409],
    [new GateError("not_appended_prefix", "x"), 400],
    [new RolloutExistsError("r"), 409],
    [new TurnRewardError("unknown_turn", "x"), 404],
    [new TurnRewardError("turn_not_recorded", "x"), 409],
    [new TurnRewardError("reward_conflict", "x"), 409],
    [new UnknownTeacherError("x"), 400],
    [new GateError("invalid_logprobs", "x"), 400],
    [new InvalidRequestError("x"), 400],
    [new GatewayError(413, "x"), 413],
    [new Error("a bug"), undefined],
    ["not even an error", undefined],
  ];
  for (const [error, status] of cases) assert.equal(httpStatus(error), status, String(error));
});
