/**
 * How a recorded answer's sampled ids meet the next prompt's delta.
 *
 * - A format with end-of-turn ids (ChatML's `<|im_end|>`, harmony's `<|return|>`/`<|call|>`): an
 *   output that stopped without one gets its end bridged (context, never trained, in history
 *   form: `TurnEnd.bridge`), then the delta follows.
 * - A format whose turns end at the next message's role marker (GLM, `closingMarkers`): the delta
 *   starts with that marker; when the policy stopped by sampling that very marker, the two are
 *   one id (the sampled one stays, the delta's goes). Nothing is bridged: an output cut short is
 *   closed by the delta's own marker, as a full render closes it.
 *
 * @module
 */
import type { ChatFormat, TurnEnd } from "./family.ts";

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
 * import { type ChatFormat, turnEnd } from "./family.ts";
 * declare const glm: ChatFormat; // closingMarkers: [<|user|>, <|observation|>]
 * declare const observation: number;
 *
 * // { bridgeIds: [], deltaIds: [5] }
 * await joinTurn(glm, turnEnd(glm), [9, observation], [observation, 5]);
 * ```
 */
export async function joinTurn(
  format: Pick<ChatFormat, "closingMarkers">,
  end: TurnEnd,
  outputIds: readonly number[],
  deltaIds: number[],
): Promise<TurnJoin> {
  const last = outputIds.at(-1);
  if (format.closingMarkers) {
    const shared = last !== undefined && format.closingMarkers.includes(last) &&
      deltaIds[0] === last;
    return { bridgeIds: [], deltaIds: shared ? deltaIds.slice(1) : deltaIds };
  }
  return { bridgeIds: await end.bridge(outputIds), deltaIds };
}

/**
 * The output ids closed as a full render closes the answer, to compare with `renderAnswer`
 * (drift): with the end id the policy would have written when the output lacks one
 * (`TurnEnd.completed`), or (closing markers) with the marker the render ends with.
 */
export async function closedOutput(
  format: Pick<ChatFormat, "closingMarkers">,
  end: TurnEnd,
  outputIds: readonly number[],
  answerIds: readonly number[],
): Promise<number[]> {
  const markers = format.closingMarkers;
  if (!markers) return await end.completed(outputIds);
  const last = outputIds.at(-1);
  if (last !== undefined && markers.includes(last)) return [...outputIds];
  const close = answerIds.at(-1);
  return close === undefined ? [...outputIds] : [...outputIds, close];
}
