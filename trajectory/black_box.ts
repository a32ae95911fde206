/**
 * The message-level record of a black-box turn (the answer came from a hosted API): the history
 * mounts in the rollout's tree like any turn, so chains and labels work the same, but no token
 * ids are claimed.
 *
 * @module
 */
import type { AssistantMessage, CanonicalRequest } from "../model/messages.ts";
import { assignChain, openAgentCalls } from "./assign_chain.ts";
import type { Rollout } from "./rollout.ts";
import type { Turn } from "./turn.ts";
import { TurnTree } from "./turn_tree.ts";

export function recordBlackBoxTurn(
  rollout: Rollout,
  req: CanonicalRequest,
  answer: AssistantMessage,
  usage: { input_tokens: number; output_tokens: number },
  received: number,
): Turn {
  const mount = rollout.tree.mount(req.messages, TurnTree.toolsKey(req.tools));
  const now = Date.now();
  const turn: Turn = {
    id: `${rollout.id}.${rollout.turns.length}.bb`,
    index: rollout.turns.length,
    rolloutId: rollout.id,
    parent: mount.base,
    mount: mount.base ? "extend" : rollout.turns.length === 0 ? "root" : "rewritten",
    chain: 0,
    retries: 0,
    drift: null,
    toolSpans: [],
    blackBox: true,
    messages: req.messages,
    tools: req.tools,
    renderedMessages: req.messages.length - mount.baseDepth,
    bridgeIds: [],
    deltaIds: [],
    promptLength: usage.input_tokens,
    maxTokens: req.sampling.max_tokens ?? 0,
    outputIds: [],
    logprobs: null,
    message: answer,
    malformedToolCalls: 0,
    status: "done",
    result: Promise.resolve({
      id: "",
      model: req.model,
      message: answer,
      stopReason: "stop",
      usage: { ...usage, reasoning_tokens: 0, cached_tokens: 0 },
      created: Math.floor(now / 1000),
    }),
    timings: { received, rendered: received, completed: now },
  };
  const node = rollout.tree.attach(mount, req.messages, turn);
  assignChain(rollout, turn, mount);
  rollout.turns.push(turn);
  rollout.tree.recordAnswer(node, turn);
  openAgentCalls(rollout, turn, answer);
  return turn;
}
