/**
 * The message-level record of a black-box turn (the answer came from a hosted API): the history
 * mounts in the rollout's tree like any turn, so chains and labels work the same, but no token
 * ids are claimed.
 *
 * @module
 */
import type { AssistantMessage, CanonicalRequest, TurnAnswer } from "../model/messages.ts";
import { openAgentCalls, registerTurn } from "./assign_chain.ts";
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
  const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
  const now = Date.now();
  const result: TurnAnswer = {
    id: "",
    model: req.model,
    message: answer,
    stopReason: "stop",
    usage: { ...usage, reasoning_tokens: 0, cached_tokens: 0 },
    created: Math.floor(now / 1000),
  };
  const { turn, promptNode } = registerTurn(rollout, req, mount, Promise.resolve(result), "bb");
  Object.assign(
    turn,
    {
      blackBox: true,
      renderedMessages: req.messages.length - mount.baseDepth,
      promptLength: usage.input_tokens,
      maxTokens: req.sampling.max_tokens ?? 0,
      message: answer,
      status: "done",
      timings: { received, rendered: received, completed: now },
    } satisfies Partial<Turn>,
  );
  rollout.tree.recordAnswer(promptNode, turn);
  openAgentCalls(rollout, turn, answer);
  return turn;
}
