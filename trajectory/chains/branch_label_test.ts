/**
 * Branch labels of agents whose requests offer no tools: mini-swe-agent's whole conversation (text
 * actions, no tools) is the main line and trains; OpenCode's tool-less title request, sent before
 * its first turn, is a side request even though it came first. Through a real `TurnRunner` (the
 * in-memory generation backend test double answers with real Qwen3 ids).
 */
import assert from "node:assert/strict";
import type { AssistantMessage, CanonicalRequest, Message, ToolSpec } from "../../canonical/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { qwen3SampledText } from "../../tests/invariants/conversation_generator.ts";
import { InMemoryBackendTestDouble } from "../../tests/support/in_memory_backend.ts";
import { Rollout } from "../rollout.ts";
import { buildSamples } from "../samples/samples.ts";
import type { Turn } from "../turn.ts";
import { TurnRunner } from "../turns/turn_runner.ts";

const model = await PolicyModel.load();
const bash: ToolSpec[] = [{ name: "bash", kind: "function", parameters: { type: "object" } }];

function request(messages: Message[], tools: ToolSpec[] = []): CanonicalRequest {
  return { protocol: "chat", model: "policy", messages, tools, sampling: {}, stream: false };
}

function setup() {
  const backend = new InMemoryBackendTestDouble();
  const runner = new TurnRunner(model, backend);
  const rollout = new Rollout("r", "token", {}, {});
  const turn = async (req: CanonicalRequest, answer: AssistantMessage): Promise<Turn> => {
    backend.enqueue({
      output_ids: await model.tokenizer.encode(qwen3SampledText(answer)),
      finish_reason: "stop",
    });
    const t = await runner.start(rollout, req, "call_");
    await t.result;
    return t;
  };
  return { rollout, turn };
}

const say = (content: string): AssistantMessage => ({
  role: "assistant",
  content,
  reasoning_content: "Think.",
});

const MINI_SYSTEM: Message = { role: "system", content: "Reply with exactly ONE bash block." };
const task: Message = { role: "user", content: "Please solve this issue: fix the slug." };
const action = say("THOUGHT: look first.\n\n```mswea_bash_command\nls\n```");
const observation: Message = {
  role: "user",
  content: "<returncode>0</returncode>\n<output>\na.py\n</output>",
};

Deno.test("a tool-less agent's conversation is main, its turns extend it, and it trains", async () => {
  const { rollout, turn } = setup();
  const t1 = await turn(request([MINI_SYSTEM, task]), action);
  const t2 = await turn(request([MINI_SYSTEM, task, t1.message!, observation]), action);
  assert.equal(t2.parent, t1, "the observation turn extends the first");
  // The agent rewrites its history (an edited earlier answer): a rewrite of the main chain,
  // trained in a sample of its own.
  const edited = { ...t1.message!, content: "THOUGHT: trimmed." };
  await turn(request([MINI_SYSTEM, task, edited, observation]), action);
  // A request offering tools under another system prompt later on does not unseat a main line
  // that has been continued.
  await turn(request([{ role: "system", content: "Another agent." }, task], bash), say("ok"));

  assert.deepEqual(rollout.chains.map((c) => c.label), ["main", "rewrite", "side"]);
  assert.equal(rollout.chains[0].evidence.reason, "first request of the rollout");
  const samples = buildSamples(rollout);
  assert.deepEqual(samples.map((s) => s.branch), ["main", "rewrite"]);
  assert.equal(
    samples[0].loss_mask.reduce((a, b) => a + b, 0),
    t1.outputIds.length + t2.outputIds.length,
    "the main sample trains exactly the two sampled outputs",
  );
});

Deno.test("a tool-less request sent before the first turn is side once the agent's turn arrives", async () => {
  const { rollout, turn } = setup();
  const title: Message[] = [
    { role: "system", content: "You are a title generator. Output ONLY a title." },
    { role: "user", content: "Generate a title for this conversation:\n" },
    { role: "user", content: "Create probe.txt then list files" },
  ];
  await turn(request(title), say("Create probe file"));
  assert.equal(rollout.chains[0].label, "main", "alone, the first request is taken for main");

  const system: Message = { role: "system", content: "You are opencode, an interactive CLI." };
  const user: Message = { role: "user", content: "Create probe.txt then list files" };
  const t2 = await turn(request([system, user], bash), {
    role: "assistant",
    content: "",
    tool_calls: [{ id: "x", name: "bash", arguments: '{"command": "ls"}' }],
  });
  const result: Message = {
    role: "tool",
    content: "probe.txt",
    tool_call_id: t2.message!.tool_calls![0].id,
  };
  const t3 = await turn(request([system, user, t2.message!, result], bash), say("Done."));
  assert.equal(t3.parent, t2);

  assert.deepEqual(rollout.chains.map((c) => c.label), ["side", "main"]);
  assert.equal(rollout.chains[0].evidence.demoted_by_chain, 1);
  assert.equal(rollout.chains[0].evidence.first_label, "main");
  assert.equal(rollout.chains[1].evidence.demoted_chain, 0);
  const samples = buildSamples(rollout);
  assert.deepEqual(samples.map((s) => [s.branch, s.turns]), [["main", [t2.id, t3.id]]]);
});
