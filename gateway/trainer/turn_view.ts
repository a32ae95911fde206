/**
 * What `GET /api/rollouts/:id` shows of each turn (`turn_list`): its place in the tree, status,
 * lengths, facts and timings, without the ids themselves (those are in the samples).
 *
 * @module
 */
import type { Rollout } from "../../trajectory/mod.ts";

export function turnView(t: Rollout["turns"][number], rewards?: Rollout["turnRewards"]) {
  return {
    id: t.id,
    index: t.index,
    parent: t.parent?.id ?? null,
    mount: t.mount,
    status: t.status,
    error: t.error ?? null,
    prompt_length: t.promptLength,
    rendered_messages: t.renderedMessages,
    output_length: t.outputIds.length,
    finish_reason: t.finishReason ?? null,
    malformed_tool_calls: t.malformedToolCalls,
    weight_version: t.weightVersion ?? null,
    ...(rewards?.has(t.id) ? { reward: rewards.get(t.id) } : {}),
    ...(t.facts ? { facts: t.facts } : {}),
    timings: t.timings,
    chain: t.chain,
    session: t.session,
    special_text: t.specialText.length,
  };
}
