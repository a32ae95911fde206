/**
 * Drift: the template would render a recorded answer differently from what was sampled (extra
 * newlines before a tool call, non-canonical tokenization, an empty think block the template
 * drops). rollgate keeps the sampled ids either way; the finding is reported per turn and the
 * `drift` label policy decides whether such a turn is trained.
 *
 * @module
 */
import type { AssistantMessage } from "../../canonical/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import type { Drift } from "../turn.ts";

const CONTEXT = 8;

/**
 * First difference between a re-render and the sampled ids, or null when they agree. With
 * `inPlace` (the full render departs from the generation prompt before the answer), the
 * generation prompt's ids from there on are compared too: a difference there has a negative
 * position, counted back from the output's first id.
 */
export function findDrift(
  rendered: readonly number[],
  sampled: readonly number[],
  inPlace?: { prompt: readonly number[]; rendered: readonly number[] } | null,
): Drift | null {
  if (inPlace) {
    const found = findDrift(inPlace.rendered, [...inPlace.prompt, ...sampled]);
    if (found) return { ...found, position: found.position - inPlace.prompt.length };
  }
  if (rendered.length === 0) return null;
  const n = Math.max(rendered.length, sampled.length);
  for (let i = 0; i < n; i++) {
    if (rendered[i] !== sampled[i]) {
      return {
        position: i,
        rendered: rendered.slice(i, i + CONTEXT),
        sampled: sampled.slice(i, i + CONTEXT),
      };
    }
  }
  return null;
}

/**
 * The drift of a sampled answer (that stopped) as `model` renders it: the answer, closed as the
 * render closes it, and the generation prompt before it (`renderAnswerInPlace`).
 */
export async function answerDrift(
  model: PolicyModel,
  message: AssistantMessage,
  outputIds: readonly number[],
): Promise<Drift | null> {
  const answer = await model.renderAnswerIds(message);
  const closed = await model.closedOutput(outputIds, answer);
  return findDrift(answer, closed, await model.renderAnswerInPlace(message));
}
