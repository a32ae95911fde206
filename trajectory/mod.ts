/**
 * Rollouts, their turns and message tree, and the samples built from them.
 *
 * @module
 */
export { promptIds, pushAll, type MountKind, type Turn, type TurnStatus } from "./turn.ts";
export { MessageNode, type Mount, TurnTree } from "./turn_tree.ts";
export { sameJson, sameMessage } from "./same_message.ts";
export { buildSample, buildSamples, leafTurns, type Sample } from "./samples.ts";
export { Rollout, type RolloutSampling, type RolloutStatus } from "./rollout.ts";
export { type CreateRollout, RolloutExistsError, RolloutStore } from "./rollout_store.ts";
