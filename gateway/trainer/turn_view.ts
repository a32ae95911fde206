/**
 * What `GET /api/rollouts/:id` shows of each turn (`turn_list`): its place in the tree, status,
 * lengths, facts and timings, without the ids themselves (those are in the samples).
 *
 * @module
 */
import type { Rollout } from "../../trajectory/mod.ts";

export function turnView(t: Rollout["turns"][number], r?: Rollout) {
  const score = r?.teacher ? r.teacherScores?.get(t.id) : undefined;
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
    ...(r?.turnRewards?.has(t.id) ? { reward: r.turnRewards.get(t.id) } : {}),
    // With a teacher: whether the turn is scored, given up (and why), or not yet.
    ...(r?.teacher && t.status === "done" && t.outputIds.length
      ? {
        teacher_score: !score ? "pending" : "logprobs" in score ? "scored" : "failed",
        ...(score && "error" in score ? { teacher_error: score.error } : {}),
      }
      : {}),
    ...(t.facts ? { facts: t.facts } : {}),
    timings: t.timings,
    chain: t.chain,
    session: t.session,
    special_text: t.specialText.length,
  };
}
