/**
 * A registered turn's prompt, planned and placed: a delta render (`prompt_plan.ts`), or, when an
 * engine renders (`PolicyModel.rendersInFull`), the engine's full render checked against the
 * base turn (`engine_prompt.ts`), which may split the turn off its chain (`splitChain`). A render
 * that fails fails the turn: an engine that could not be reached with its own error (a 502 the
 * agent retries), anything else as a render failure (a 400). The request's images, stored while
 * the prompt renders, must be stored before the turn is placed.
 *
 * @module
 */
import { GenerationError } from "../../generation/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import { placePrompt } from "../turn.ts";
import { planPrompt, type PromptPlan, type PromptWork } from "./prompt_plan.ts";
import { planEngineRender } from "./engine_prompt.ts";
import { splitChain } from "./assign_chain.ts";
import { fail, type OpenTurn, refuse } from "./turn_record.ts";
import type { TurnError } from "../turn_error.ts";

/** The prompt of `work` with `model`: its delta render, or the engine's full render. */
export function planFor(model: PolicyModel, work: PromptWork): Promise<PromptPlan> {
  return model.rendersInFull ? planEngineRender(model, work) : planPrompt(model, work);
}

/** Plans `open`'s prompt and puts it on its chain's line (or a new one); see the module doc. */
export async function planTurn(
  open: OpenTurn,
  model: PolicyModel,
  work: PromptWork,
  imagesStored: Promise<TurnError | null> = Promise.resolve(null),
): Promise<PromptPlan> {
  let plan: PromptPlan;
  try {
    plan = await planFor(model, work);
  } catch (e) {
    if (e instanceof GenerationError) {
      fail(open, e);
      throw e;
    }
    throw refuse(open, "render_failed", `cannot render the conversation: ${(e as Error).message}`);
  }
  const unstored = await imagesStored;
  if (unstored) throw refuse(open, unstored.kind, unstored.message);
  const { bridgeIds, deltaIds, rerender, ...planned } = plan;
  Object.assign(open.turn, planned);
  if (rerender) splitChain(open.rollout, open.turn, rerender);
  placePrompt(open.turn, bridgeIds, deltaIds);
  return plan;
}
