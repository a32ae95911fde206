/**
 * A turn's prompt when an engine renders (`PolicyModel.rendersInFull`, the `engine` family): the
 * engine's full render of the whole history, checked against the base turn's prompt and output
 * (the prefix invariant). Where the render extends them, what follows is the turn's delta, as a
 * delta render would give it, and the turn continues its chain. Where it does not (the template
 * drops old reasoning, rewrites a sampled answer, tokenizes it otherwise), the turn starts a new
 * chain from the engine's render (`splitChain`, label `rerender`), and the evidence says where
 * the two first differ: the position, the earlier turn whose ids hold it, and a few ids of each
 * side with their text.
 *
 * The check reads the base's ids once (a compare, no copy); an engine render costs the whole
 * history by nature (the conversation goes to the engine and its ids come back every turn).
 *
 * @module
 */
import type { PolicyModel } from "../../model/mod.ts";
import type { Turn } from "../turn.ts";
import type { Rerender } from "../chains/mod.ts";
import { type PromptPlan, type PromptWork, toolSpans } from "./prompt_plan.ts";

/** How many ids of each side the evidence shows. */
const SHOWN = 16;

/** The prompt of a turn rendered in full by the engine; see the module doc. */
export async function planEngineRender(
  model: PolicyModel,
  work: PromptWork,
): Promise<PromptPlan> {
  const { base, messages, tools, baseDepth } = work;
  const rendered = await model.renderFull(messages, tools, true, {
    splitSpecialTokens: work.splitSpecialTokens,
  });
  const ids = rendered.ids;
  const full = (rerender?: Rerender): PromptPlan => ({
    bridgeIds: [],
    deltaIds: ids,
    promptLength: ids.length,
    renderedMessages: messages.length,
    toolSpans: toolSpans(model, rendered, messages, 0),
    specialText: rendered.specialText,
    images: [], // the engine family shows no images (`requireImagesShown` refuses them)
    ...(rerender ? { rerender } : {}),
  });
  if (!base) return full();
  const chain = base.ids.line.view(0, base.ids.outputEnd);
  const at = firstDifference(chain, ids);
  if (at >= 0) return full(await rerenderEvidence(model, base, chain, ids, at));
  const deltaIds = ids.slice(chain.length);
  const added = messages.slice(baseDepth);
  return {
    bridgeIds: [],
    deltaIds,
    promptLength: ids.length,
    renderedMessages: added.length,
    toolSpans: toolSpans(model, { ...rendered, ids: deltaIds }, added, 0),
    specialText: rendered.specialText.filter((hit) => hit.message >= baseDepth),
    images: [],
  };
}

/** First index where `ids` does not continue `chain`, or -1 when it extends it. */
function firstDifference(chain: Int32Array, ids: readonly number[]): number {
  const n = Math.min(chain.length, ids.length);
  for (let i = 0; i < n; i++) if (chain[i] !== ids[i]) return i;
  return ids.length >= chain.length ? -1 : n;
}

async function rerenderEvidence(
  model: PolicyModel,
  base: Turn,
  chain: Int32Array,
  ids: readonly number[],
  at: number,
): Promise<Rerender> {
  // The turn holding `at`: up from the base (only when the chain breaks).
  let holder: Turn = base;
  while (holder.parent && holder.ids.bridgeStart > at) holder = holder.parent;
  const recorded = Array.from(chain.subarray(at, at + SHOWN));
  const rendered = ids.slice(at, at + SHOWN);
  return {
    reason: "the engine's render of the history does not extend the chain's prompt and output",
    base_turn: base.id,
    position: at,
    turn: holder.id,
    in: at >= holder.ids.outputStart ? "sampled_ids" : "prompt",
    recorded,
    rendered,
    text: { recorded: await model.decode(recorded), rendered: await model.decode(rendered) },
  };
}
