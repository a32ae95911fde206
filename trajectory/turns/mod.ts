/**
 * Turns from request to answer: the runner's entry points and generation, the prompt plan (a
 * pure function of model, mount and request), admission and drain ({@link TurnFlight}), the
 * record of a sampled answer and the chain a turn joins, and teacher scoring of recorded turns
 * off their path ({@link TeacherScorer}).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TurnFlight } from "./mod.ts";
 * import { RolloutStore } from "../mod.ts";
 *
 * const rollout = new RolloutStore().create({ id: "r1" });
 * const flight = new TurnFlight({ maxPendingPerRollout: 0 });
 * assert.throws(() => flight.admit(rollout), { kind: "too_many_pending" }); // a 429 for the agent
 * flight.close("shutting down");
 * await flight.whenIdle(); // nothing in flight: the drain ends at once
 * ```
 *
 * @module
 */
export { DEFAULT_TURN_LIMITS, TurnFlight, type TurnLimits } from "./turn_flight.ts";
export type { EndedTurn, TurnObserver } from "./turn_observer.ts";
export { TurnRunner, type TurnRunnerOptions } from "./turn_runner.ts";
export { type BlackBoxAnswer, fail, type OpenTurn, openTurn, record } from "./turn_record.ts";
export { TeacherScorer, type TeacherScoring } from "./teacher_scorer.ts";
export { splitChain } from "./assign_chain.ts";
export { storeImages } from "./turn_images.ts";
