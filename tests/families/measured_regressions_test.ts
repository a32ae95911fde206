/**
 * Defects found by measuring the existing families in live sessions and capture replays (issue
 * 25), each named after what broke. Turns go through the real `TurnRunner` with each family's
 * test model (`tests/support/family_models.ts`); the generation backend is the in-memory TEST
 * DOUBLE answering with ids the family's own renderer writes.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { AssistantMessage, CanonicalRequest, Message, ToolSpec } from "../../canonical/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import {
  auditTree,
  formatAudit,
  promptIds,
  Rollout,
  TurnRunner,
  turnTree,
} from "../../trajectory/mod.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import { familyTestModel } from "../support/family_models.ts";

export const BASH: ToolSpec = {
  name: "bash",
  kind: "function",
  parameters: { type: "object", properties: { command: { type: "string" } } },
};

export function request(messages: Message[], tools: ToolSpec[] = [BASH]): CanonicalRequest {
  return { protocol: "chat", model: "policy", messages, tools, sampling: {}, stream: false };
}

/** A runner on `model` whose backend answers with `outputs`, in order. */
export function scripted(model: PolicyModel, ...outputs: number[][]) {
  const backend = new InMemoryBackendTestDouble();
  for (const output_ids of outputs) backend.enqueue({ output_ids, finish_reason: "stop" });
  return { runner: new TurnRunner(model, backend), rollout: new Rollout("r", "t", {}, {}) };
}

function firstDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) if (a[i] !== b[i]) return i;
  return -1;
}

for (const family of ["qwen3.5", "qwen3.6", "glm-5"]) {
  Deno.test(`regression (${family}): an answer with empty reasoning that a full render writes across the generation prompt is drift, flagged where the next prompt differs`, async () => {
    const { model } = await familyTestModel(family);
    const empty: AssistantMessage = {
      role: "assistant",
      content: "",
      reasoning_content: "",
      tool_calls: [{
        id: "call_1",
        name: "bash",
        arguments: '{"command": "ls"}',
      }],
    };
    const sampled = await model.renderAnswerIds(empty);
    const { runner, rollout } = scripted(model, sampled, await model.renderAnswerIds(empty));
    const user: Message = { role: "user", content: "list files" };
    const t1 = await runner.start(rollout, request([user]), "call_");
    const answer = await t1.result;
    // The drift lies in the generation prompt (a negative position): the output is as sampled.
    assert.ok(t1.drift !== null && t1.drift.position < 0, JSON.stringify(t1.drift));
    const history: Message[] = [user, answer.message, {
      role: "tool",
      content: "a.txt",
      tool_call_id: answer.message.tool_calls![0].id,
    }];
    const t2 = await runner.start(rollout, request(history), "call_");
    await t2.result;
    // The next prompt (in a tool loop, reasoning kept) differs from a full render exactly where
    // the drift says.
    const full = (await model.renderFull(history, [BASH])).ids;
    assert.equal(
      firstDifference(promptIds(t2), full),
      t1.promptLength + t1.drift.position,
    );
  });
}

Deno.test("regression (qwen3.5): audit places every difference, not only the first: dropped reasoning after a new user query lies in each earlier turn's kept sampled ids, a changed content id elsewhere", async () => {
  const { model } = await familyTestModel("qwen3.5");
  const user: Message = { role: "user", content: "list files" };
  const call: AssistantMessage = {
    role: "assistant",
    content: "",
    reasoning_content: "Look first.",
    tool_calls: [{ id: "call_1", name: "bash", arguments: '{"command": "ls"}' }],
  };
  const done: AssistantMessage = {
    role: "assistant",
    content: "Two files.",
    reasoning_content: "Done.",
  };
  const { runner, rollout } = scripted(
    model,
    await model.renderAnswerIds(call),
    await model.renderAnswerIds(done),
    await model.renderAnswerIds(done),
  );
  const h1: Message[] = [user];
  const a1 = await (await runner.start(rollout, request(h1), "call_")).result;
  const h2 = [...h1, a1.message, { role: "tool" as const, content: "a b", tool_call_id: "call_1" }];
  const a2 = await (await runner.start(rollout, request(h2), "call_")).result;
  const h3 = [...h2, a2.message, { role: "user" as const, content: "and now?" }];
  await (await runner.start(rollout, request(h3), "call_")).result;

  const tree = turnTree(rollout);
  const [t1, t2, t3] = tree.turns;
  let audit = await auditTree(model, tree);
  // A new user query drops both earlier turns' reasoning from a full render (with the `<think>\n`
  // their generation prompt opened): two differences, each inside the generation prompt and
  // kept sampled ids of the turn that sampled it; nothing elsewhere.
  const kept = "generation_prompt_and_sampled_ids";
  assert.deepEqual(
    audit.turns[2].differences!.map((d) => [d.turn, d.in]),
    [[t1.id, kept], [t2.id, kept]],
    formatAudit(audit),
  );
  assert.match(audit.summary, / 1 differ only inside .*, 0 differ elsewhere/);

  // A content id changed after those (as a defect would): still reported, as elsewhere, though
  // the first difference lies inside kept ids.
  const user3 = t3.prompt_ids.length - 8;
  t3.prompt_ids[user3] = (t3.prompt_ids[user3] + 1) % 1000;
  audit = await auditTree(model, tree);
  const places = audit.turns[2].differences!.map((d) => d.in);
  assert.deepEqual(places, [kept, kept, "elsewhere"], formatAudit(audit));
  assert.equal(audit.turns[2].first_difference!.inside_sampled_output, true);
  assert.match(audit.summary, / 0 differ only inside .*, 1 differ elsewhere/);
  assert.match(formatAudit(audit), /ELSEWHERE/);
});
