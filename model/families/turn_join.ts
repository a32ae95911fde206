/**
 * How a recorded answer's sampled ids meet the next prompt's delta.
 *
 * - A format with an end-of-turn token (ChatML's `<|im_end|>`): an output that stopped without it
 *   gets it bridged (context, never trained), then the delta follows.
 * - A format whose turns end at the next message's role marker (GLM, `closingMarkers`): the delta
 *   starts with that marker; when the policy stopped by sampling that very marker, the two are
 *   one id (the sampled one stays, the delta's goes). Nothing is bridged: an output cut short is
 *   closed by the delta's own marker, as a full render closes it.
 *
 * @module
 */
import type { ChatFormat } from "./family.ts";

/** The ids between a recorded output and the next prompt's new messages. */
export interface TurnJoin {
  /** Appended after the output, untrained (the end-of-turn id it lacked), or `[]`. */
  bridgeIds: number[];
  /** The rendered delta as it enters the prompt. */
  deltaIds: number[];
}

/**
 * @example
 * ```ts
 * import { joinTurn } from "./turn_join.ts";
 * import type { ChatFormat } from "./family.ts";
 * declare const glm: ChatFormat; // closingMarkers: [<|user|>, <|observation|>]
 * declare const observation: number;
 *
 * joinTurn(glm, [9, observation], [observation, 5]); // { bridgeIds: [], deltaIds: [5] }
 * ```
 */
export function joinTurn(
  format: Pick<ChatFormat, "endOfTurn" | "closingMarkers">,
  outputIds: readonly number[],
  deltaIds: number[],
): TurnJoin {
  const last = outputIds.at(-1);
  if (format.closingMarkers) {
    const shared = last !== undefined && format.closingMarkers.includes(last) &&
      deltaIds[0] === last;
    return { bridgeIds: [], deltaIds: shared ? deltaIds.slice(1) : deltaIds };
  }
  const eot = format.endOfTurn.id;
  return { bridgeIds: last === eot ? [] : [eot], deltaIds };
}

/**
 * The output ids closed as a full render closes the answer, to compare with `renderAnswer`
 * (drift): with the end-of-turn id when the output lacks it, or (closing markers) with the marker
 * the render ends with when the output ends with none.
 */
export function closedOutput(
  format: Pick<ChatFormat, "endOfTurn" | "closingMarkers">,
  outputIds: readonly number[],
  answerIds: readonly number[],
): number[] {
  const last = outputIds.at(-1);
  const ends = format.closingMarkers ?? [format.endOfTurn.id];
  if (last !== undefined && ends.includes(last)) return [...outputIds];
  const close = format.closingMarkers ? answerIds.at(-1) : format.endOfTurn.id;
  return close === undefined ? [...outputIds] : [...outputIds, close];
}
