/**
 * Rollouts the viewer tests look at, played through a real gateway by the scripted policy (TEST
 * DOUBLE at the model boundary): the recorded Claude Code session (main agent, sub-agent, title
 * side request, compaction) and a pi session whose first answer drifts from the template (two
 * newlines between tool calls), masked by its label policy so that every role shows.
 *
 * @module
 */
import assert from "node:assert/strict";
import { answerText } from "../support/scripted_policy.ts";
import { callsText, claudeCodeSession } from "../trajectory/claude_code_session.ts";
import {
  chatTurn,
  fixtures,
  type Json,
  piEcho,
  type RolloutHandle,
  type TestGateway,
} from "../trajectory/agent_clients.ts";

/** The Claude Code session, finished with reward 1. */
export async function sessionRollout(t: TestGateway): Promise<RolloutHandle> {
  const r = await t.rollout({
    metadata: { task: "probe-files", harness: "claude-code" },
    sft: { weight: 0.1 },
  });
  await claudeCodeSession(t, r);
  await t.finish(r.id, 1);
  return r;
}

/** A two-turn pi session whose first answer drifts; drift is masked; finished with reward 0. */
export async function driftRollout(t: TestGateway): Promise<RolloutHandle> {
  const r = await t.rollout({ metadata: { task: "drift-probe" }, labels: { drift: "mask" } });
  const body: Json = fixtures.pi()[0].body;
  t.replies.push(callsText(
    "Two commands.",
    [["bash", { command: "ls" }], ["bash", { command: "pwd" }]],
    "\n\n",
  ));
  const a0 = await chatTurn(t, r, body);
  assert.equal(a0.tool_calls.length, 2);
  // Ѯ is two ids in Qwen3: one character drawn over two tokens.
  t.replies.push(answerText("Both ran.", "Listed in /work: README.md, notes-Ѯ.txt. Done ✓"));
  await chatTurn(t, r, {
    ...body,
    messages: [
      ...body.messages,
      piEcho(a0),
      { role: "tool", content: "README.md\nnotes-Ѯ.txt", tool_call_id: a0.tool_calls[0].id },
      { role: "tool", content: "/work", tool_call_id: a0.tool_calls[1].id },
    ],
  });
  await t.finish(r.id, 0);
  return r;
}
