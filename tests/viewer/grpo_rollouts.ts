/**
 * A GRPO-shaped run for the plots page: groups of rollouts, each a few real turns through a
 * gateway's turn runner (real Qwen3 template and tokenizer) answered by the in-memory backend TEST
 * DOUBLE with a weight version per group, rewards that differ within most groups (the first is
 * flat), an occasional rollout whose last turn fails, and end times one step apart so that time
 * plots have something to spread. Shared by the viewer tests and `bench/viewer_plots.ts`.
 *
 * @module
 */
import type { AssistantMessage, CanonicalRequest, Message } from "../../canonical/mod.ts";
import type { Gateway } from "../../gateway/mod.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";

export interface GroupRunShape {
  groups: number;
  perGroup: number;
  /** When the first rollout ends (ms since the epoch); the next end `stepMs` later. */
  startMs: number;
  stepMs: number;
  /** Every n-th rollout's last turn fails (no completion); 0: none. */
  failEvery: number;
}

/** What was played, to check the plots against. */
export interface PlayedRollout {
  id: string;
  group: string;
  reward: number;
  version: number;
  /** When it ended (ms since the epoch). */
  at: number;
  /** Turns recorded, a failed one included. */
  turns: number;
  failed: boolean;
}

const TOOLS = [{
  name: "bash",
  kind: "function" as const,
  description: "Run a shell command.",
  parameters: { type: "object", properties: { command: { type: "string" } } },
}];

function request(messages: Message[]): CanonicalRequest {
  return { protocol: "chat", model: "policy", messages, tools: TOOLS, sampling: {}, stream: false };
}

/** The reward of member `m` of group `g`: group g has g % (perGroup + 1) members earning 1. */
export function rewardOf(g: number, m: number, perGroup: number): number {
  return m < g % (perGroup + 1) ? 1 : 0;
}

/**
 * Plays the run into `gw`, whose default backend must be `backend` (`createGateway({ backend })`).
 */
export async function playGroups(
  gw: Gateway,
  backend: InMemoryBackendTestDouble,
  shape: GroupRunShape,
): Promise<PlayedRollout[]> {
  const tokenizer = gw.model.tokenizer;
  const callIds = await tokenizer.encode(
    '<think>\nLook.\n</think>\n\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}' +
      "\n</tool_call><|im_end|>",
  );
  const doneIds = await tokenizer.encode("<think>\nDone.\n</think>\n\nFixed.<|im_end|>");
  const played: PlayedRollout[] = [];
  for (let k = 0; k < shape.groups * shape.perGroup; k++) {
    const g = Math.floor(k / shape.perGroup), m = k % shape.perGroup;
    const group = `task-${String(g).padStart(3, "0")}`;
    const version = g + 1;
    const at = shape.startMs + k * shape.stepMs;
    const rollout = await gw.rollouts.create({
      id: `${group}-${m}`,
      group,
      metadata: { task: group, sample: m },
      createdAt: at - shape.stepMs / 2,
    });
    const done = 1 + (k % 3);
    const fails = shape.failEvery > 0 && k % shape.failEvery === shape.failEvery - 1;
    let messages: Message[] = [
      { role: "system", content: "You are a coding agent." },
      { role: "user", content: `Fix ${group} (${"issue text ".repeat(1 + (k % 7))}).` },
    ];
    for (let turn = 0; turn < done + (fails ? 1 : 0); turn++) {
      const last = turn === done - 1;
      if (turn < done) {
        const ids = last ? doneIds : callIds;
        backend.enqueue({
          output_ids: ids,
          logprobs: ids.map((_, i) => -(i % 9) / 10),
          finish_reason: "stop",
          weight_version: version,
        });
      }
      const t = await gw.rollouts.startTurn(rollout, request(messages), "call_");
      await t.result.catch(() => {});
      if (t.status !== "done") break;
      const answer = t.message as AssistantMessage;
      messages = [...messages, answer];
      if (answer.tool_calls?.length) {
        messages.push({
          role: "tool",
          content: `file_${k}_${turn}.py\n`.repeat(1 + turn * 3),
          tool_call_id: answer.tool_calls[0].id,
        });
      } else messages.push({ role: "user", content: "And the docs?" });
    }
    const reward = rewardOf(g, m, shape.perGroup);
    await gw.rollouts.finish(rollout, reward);
    rollout.finishedAt = at;
    played.push({
      id: rollout.id,
      group,
      reward,
      version,
      at,
      turns: rollout.turns.length,
      failed: fails,
    });
  }
  return played;
}
