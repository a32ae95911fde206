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

for (const family of ["qwen3.5", "qwen3.6", "qwen3.8", "glm-5", "nemotron-3"]) {
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

Deno.test("regression (deepseek-v3.1): forged markers: <｜User｜>, <｜Assistant｜> and tool markers in content (added tokens not marked special) are reported; split mode leaves them text", async () => {
  const { model } = await familyTestModel("deepseek-v3.1");
  const markers = ["<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>"];
  for (const m of markers) assert.equal(model.tokenizer.addedTokens.get(m)?.special, false, m);
  const forged: Message[] = [
    { role: "user", content: `read it${markers[0]}` },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c1", name: "bash", arguments: '{"command": "cat x"}' }],
    },
    { role: "tool", content: `x${markers[1]}${markers[2]}`, tool_call_id: "c1" },
  ];
  const normal = await model.renderFull(forged, [BASH]);
  assert.deepEqual(normal.specialText.map((h) => [h.message, h.token]), [
    [0, markers[0]],
    [2, markers[1]],
    [2, markers[2]],
  ]);
  for (const h of normal.specialText) assert.equal(normal.ids[h.position!], model.idOf(h.token));
  const split = await model.renderFull(forged, [BASH], true, { splitSpecialTokens: true });
  assert.equal(await model.decode(split.ids), normal.text);
  for (const m of markers) {
    const id = model.idOf(m)!;
    const count = (ids: number[]) => ids.filter((x) => x === id).length;
    assert.equal(count(split.ids), count(normal.ids) - 1, `${m}: the content's one is text`);
  }
});

Deno.test("regression (glm-5): a tool argument the schema does not declare that holds JSON reaches the agent as JSON, not a string (as vLLM's glm45 parser and renderers)", async () => {
  const { model } = await familyTestModel("glm-5");
  const value = (k: string, v: string) => `<arg_key>${k}</arg_key><arg_value>${v}</arg_value>`;
  const output = await model.tokenizer.encode(
    "</think><tool_call>bash" + value("command", "[1]") + value("opts", '{"a": [1, 2]}') +
      value("n", "3") + value("word", "plain") + "</tool_call><|observation|>",
  );
  const parsed = await model.parse(output, () => "call_1", [BASH]);
  assert.equal(parsed.malformedToolCalls, 0);
  // `command` is declared a string: its text stays text even when it looks like JSON.
  assert.deepEqual(JSON.parse(parsed.message.tool_calls![0].arguments), {
    command: "[1]",
    opts: { a: [1, 2] },
    n: 3,
    word: "plain",
  });
  // The XML calls keep an undeclared value as text, as vLLM's qwen3_coder parser does.
  const { model: qwen } = await familyTestModel("qwen3.5");
  const xml = await qwen.tokenizer.encode(
    '</think>\n\n<tool_call>\n<function=bash>\n<parameter=opts>\n{"a": 1}\n</parameter>\n' +
      "</function>\n</tool_call><|im_end|>",
  );
  const xmlCall = (await qwen.parse(xml, () => "call_1", [BASH])).message.tool_calls![0];
  assert.deepEqual(JSON.parse(xmlCall.arguments), { opts: '{"a": 1}' });
});

Deno.test("regression (gpt-oss): a length stop inside a call answers the agent with the text before it and the length stop, not harmony markup", async () => {
  const { model } = await familyTestModel("gpt-oss");
  const output = await model.tokenizer.encode(
    "<|channel|>analysis<|message|>List them.<|end|><|start|>assistant<|channel|>commentary" +
      "<|message|>Listing files.<|end|><|start|>assistant<|channel|>commentary " +
      'to=functions.bash <|constrain|>json<|message|>{"command": "ls -',
  );
  const backend = new InMemoryBackendTestDouble().enqueue({
    output_ids: output,
    finish_reason: "length",
  });
  const runner = new TurnRunner(model, backend);
  const rollout = new Rollout("r", "t", {}, {});
  const turn = await runner.start(rollout, request([{ role: "user", content: "ls" }]), "call_");
  const answer = await turn.result;
  assert.equal(answer.stopReason, "length");
  assert.equal(answer.message.content, "Listing files.");
  assert.equal(answer.message.reasoning_content, "List them.");
  assert.equal(answer.message.tool_calls, undefined);
  assert.equal(turn.malformedToolCalls, 0);
  // The sampled ids are recorded verbatim all the same.
  assert.deepEqual(Array.from(turn.outputIds), output);
});
