/**
 * Which trainer took which turn's request, for the delta form of `GET /api/requests/next`
 * (`?prompt=delta&trainer=ID`): a turn's prompt starts with its parent turn's prompt and output,
 * so a trainer that took the parent's request (and completed it: it has the output) needs only
 * the ids after them. This log says whether it took it; the trainer's client keeps the ids and,
 * when it does not have them after all (its cache dropped them, its completion was not the one
 * recorded), asks for the whole prompt (`GET /api/requests/:rid/prompt`).
 *
 * Bounded: the oldest entries go first (a chain's next turn needs only its latest). Replicas
 * each keep their own, so a base taken through another replica is not known here and the
 * prompt goes whole: a delta is offered only when it is known to be right.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { PromptBases } from "./prompt_bases.ts";
 *
 * const bases = new PromptBases(2);
 * bases.taken("r1.0.ab", "req_1", "trainer-a");
 * assert.equal(bases.baseFor({ turnId: "r1.0.ab", length: 9 }, "trainer-a")?.request_id, "req_1");
 * assert.equal(bases.baseFor({ turnId: "r1.0.ab", length: 9 }, "trainer-b"), undefined);
 * ```
 *
 * @module
 */
import type { PromptBase } from "../../generation/mod.ts";

/** What a delta body names as its base: a request the trainer took, and its leading ids. */
export interface DeltaBase {
  request_id: string;
  length: number;
}

/** Entries kept by default: a chain needs one, and a fork the one it forks from. */
export const DEFAULT_PROMPT_BASES = 65_536;

export class PromptBases {
  /** By turn id: the request that carried the turn and the trainer it was last handed to. */
  readonly #byTurn = new Map<string, { requestId: string; trainer: string }>();

  constructor(readonly capacity = DEFAULT_PROMPT_BASES) {}

  /** A trainer took `requestId`, the request of turn `turnId`. */
  taken(turnId: string, requestId: string, trainer: string): void {
    this.#byTurn.delete(turnId);
    this.#byTurn.set(turnId, { requestId, trainer });
    if (this.#byTurn.size > this.capacity) this.#byTurn.delete(this.#byTurn.keys().next().value!);
  }

  /** The base a delta for `trainer` may name, when that trainer took the base turn's request. */
  baseFor(base: PromptBase | undefined, trainer: string): DeltaBase | undefined {
    if (!base) return undefined;
    const taken = this.#byTurn.get(base.turnId);
    if (!taken || taken.trainer !== trainer) return undefined;
    return { request_id: taken.requestId, length: base.length };
  }
}
