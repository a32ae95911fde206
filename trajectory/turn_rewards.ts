/**
 * Rewards per turn (credit per step: verl's turn scores, verifiers' step rewards): a trainer posts
 * one reward for a recorded turn, before or after the rollout finishes; the rollout's own reward
 * stays. A turn has at most one: a second post of the same value changes nothing (a retried
 * call), another value is refused, so what a trainer trained on is never silently replaced.
 *
 * A rollout holds them in one map, made at the first post: a rollout without per-turn rewards
 * costs one empty field, nothing per turn.
 *
 * @module
 */
import type { Turn } from "./turn.ts";

export type TurnRewardErrorKind =
  /** No turn of the rollout has that id (or index). */
  | "unknown_turn"
  /** The turn is still waiting for its answer, or failed: nothing of it is trained. */
  | "turn_not_recorded"
  /** The turn already has another reward. */
  | "reward_conflict";

export class TurnRewardError extends Error {
  override name = "TurnRewardError";
  constructor(readonly kind: TurnRewardErrorKind, message: string) {
    super(message);
  }
}

/** A rollout's turn named by its id, or by its index (`0`, `1`, … in arrival order). */
export function findTurn(turns: readonly Turn[], ref: string): Turn {
  const turn = /^\d{1,9}$/.test(ref) ? turns[Number(ref)] : turns.find((t) => t.id === ref);
  if (!turn) throw new TurnRewardError("unknown_turn", `no turn ${ref} in this rollout`);
  return turn;
}

/**
 * Whether `reward` is new for `turn` (true: record it), false when it has that reward already;
 * throws a {@link TurnRewardError} when the turn cannot take it.
 */
export function checkTurnReward(
  rewards: ReadonlyMap<string, number> | null,
  turn: Turn,
  reward: number,
): boolean {
  if (turn.status !== "done") {
    throw new TurnRewardError(
      "turn_not_recorded",
      `turn ${turn.id} is ${
        turn.status === "pending" ? "still waiting for its answer" : "failed"
      }: only a recorded turn takes a reward`,
    );
  }
  const had = rewards?.get(turn.id);
  if (had === undefined) return true;
  if (had === reward) return false;
  throw new TurnRewardError(
    "reward_conflict",
    `turn ${turn.id} already has reward ${had}; a turn's reward is posted once`,
  );
}

/**
 * Gives turn `ref` of `rollout` its `reward` (the map is made at the first post); `recorded` is
 * false when the turn had that reward already. Throws as {@link checkTurnReward} does.
 */
export function setTurnReward(
  rollout: { turns: readonly Turn[]; turnRewards: Map<string, number> | null },
  ref: string,
  reward: number,
): { turn: Turn; recorded: boolean } {
  const turn = findTurn(rollout.turns, ref);
  const recorded = checkTurnReward(rollout.turnRewards, turn, reward);
  if (recorded) (rollout.turnRewards ??= new Map()).set(turn.id, reward);
  return { turn, recorded };
}
