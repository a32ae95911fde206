/**
 * `--model-family engine` on the real CPU vLLM: a `main.ts serve` whose every prompt the vLLM
 * server renders (`/v1/chat/completions/render`) and whose every answer its parsers read
 * (`/derender`, the hermes tool parser), driven through the official `openai` SDK.
 *
 * - With `--backend vllm` (the tiny Qwen3 whose greedy answer to any prompt is `Hi<|im_end|>`,
 *   `tinyQwen3(0, { greedyStop: true })`), a three-turn conversation is prefix-stable under
 *   Qwen3's template: one chain, every sampled id trained once, every recorded logprob the
 *   engine's recompute.
 * - Through the gate (a rollout with `backend: "gate"`): the trainer is offered the engine's
 *   prompt ids; a scripted policy (TEST DOUBLE playing the trainer, with real token ids) answers
 *   with reasoning and a tool call, which the engine's parser reads; the tool loop is one chain;
 *   after a new user message Qwen3's template drops the earlier reasoning, and that turn starts a
 *   `rerender` chain whose evidence points at the first sampled id of the first turn. `audit`
 *   through the engine agrees.
 *
 * One vLLM server for the file (40–90 s to start on 2 cores).
 *
 * @module
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { PolicyModel } from "../../model/mod.ts";
import { VllmRender } from "../../generation/mod.ts";
import { auditTree, type TurnTreeExport } from "../../trajectory/mod.ts";
import { skipGroup } from "../support/skips.ts";
import { engineMissing, startVllm, tinyQwen3, type VllmServer } from "../support/vllm_server.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { postJson, trainerLoop } from "../support/trainer_loop.ts";
import { checkLossOwnership } from "../support/loss_ownership.ts";
import { checkEngineTruth } from "../support/engine_truth.ts";

const GROUP = "real engine (vLLM CPU)";
const ignore = skipGroup(GROUP, engineMissing());

const qwen3 = ignore ? undefined : await PolicyModel.load();
/** What the tiny Qwen3 answers under greedy decoding: two ids, `Hi` and `<|im_end|>`. */
const ANSWER = "Hi";
const IM_END = 151645;

/** The vLLM server, the gateway rendering through it, and the model directory they serve. */
interface Servers {
  vllm: VllmServer;
  gateway: GatewayProcess;
  modelDir: string;
}

async function withServers(fn: (s: Servers) => Promise<void>): Promise<void> {
  const modelDir = await tinyQwen3(0, { greedyStop: true });
  const vllm = await startVllm({
    model: modelDir,
    args: ["--enable-scale-out", "--enable-auto-tool-choice", "--tool-call-parser", "hermes"],
  });
  let gateway: GatewayProcess | undefined;
  try {
    gateway = await startGateway([
      "--no-journal",
      "--model-family",
      "engine",
      "--model-dir",
      modelDir,
      "--vllm-url",
      vllm.url,
      "--engine-model",
      vllm.servedName,
      "--backend",
      "vllm",
      // vLLM's --max-model-len (startVllm's default): sampling never asks for more.
      "--context-length",
      "16384",
    ]);
    await fn({ vllm, gateway, modelDir });
  } finally {
    await gateway?.stop();
    await vllm.stop();
  }
}

async function api(g: GatewayProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(`${g.url}/api${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

function client(rollout: { base_url: string; token: string }): OpenAI {
  return new OpenAI({
    baseURL: `${rollout.base_url}/v1`,
    apiKey: rollout.token,
    maxRetries: 0,
    timeout: 300_000,
  });
}

/** vLLM's own render of an OpenAI-shaped conversation, asked directly. */
async function engineRender(
  v: VllmServer,
  messages: OpenAI.Chat.ChatCompletionMessageParam[],
  tools?: OpenAI.Chat.ChatCompletionTool[],
): Promise<number[]> {
  const res = await fetch(`${v.url}/v1/chat/completions/render`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: v.servedName, messages, tools }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).token_ids;
}

/** With `--backend vllm`: see the module doc. */
async function vllmBackend({ vllm, gateway }: Servers): Promise<void> {
  const rollout = await api(gateway, "POST", "/rollouts", {
    id: "vllm-chat",
    sampling: { temperature: 0 },
  });
  const openai = client(rollout);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "system", content: "You answer in one sentence." },
    { role: "user", content: "What is six times seven?" },
  ];
  const usage: OpenAI.CompletionUsage[] = [];
  for (const next of ["And seven times six?", "And forty-two times one?", null]) {
    const answer = await openai.chat.completions.create({ model: "policy", messages });
    assert.equal(answer.choices[0].message.content, ANSWER);
    usage.push(answer.usage!);
    if (next === null) break;
    messages.push({ role: "assistant", content: ANSWER }, { role: "user", content: next });
  }
  const tree: TurnTreeExport = await api(gateway, "GET", "/rollouts/vllm-chat/tree");
  assert.deepEqual(tree.turns.map((t) => [t.chain, t.mount]), [
    [0, "root"],
    [0, "extend"],
    [0, "extend"],
  ]);
  // The prompt is the engine's render; each turn's render extended the one before (cached).
  const last = tree.turns[2];
  assert.deepEqual(last.prompt_ids, await engineRender(vllm, messages));
  assert.equal(usage[2].prompt_tokens, last.prompt_ids.length);
  assert.equal(
    usage[2].prompt_tokens_details?.cached_tokens,
    tree.turns[1].prompt_ids.length + tree.turns[1].output_ids.length,
  );
  const { samples } = await api(gateway, "POST", "/rollouts/vllm-chat/finish", { reward: 1 });
  assert.equal(samples.length, 1);
  assert.equal(samples[0].num_sampled, 3 * 2);
  checkLossOwnership(tree, samples);
  const truth = await checkEngineTruth(vllm.url, vllm.servedName, samples[0]);
  assert.equal(truth.trained, 3 * 2);
}

const weatherTool: OpenAI.Chat.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
/** What the scripted trainer samples, turn by turn (as Qwen3's template writes such answers). */
const SCRIPT = [
  "<think>\nI will look it up.\n</think>\n\n<tool_call>\n" +
  '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
  "<think>\nThe tool said sunny.\n</think>\n\nSunny, 21 °C.",
  "I cannot know tomorrow's weather.",
];

/** Through the gate: see the module doc. */
async function gate({ vllm, gateway, modelDir }: Servers): Promise<void> {
  const rollout = await api(gateway, "POST", "/rollouts", { id: "gate-tools", backend: "gate" });
  const openai = client(rollout);
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: "user", content: "Weather in Paris?" },
  ];
  const offered: number[][] = [];
  const stop = new AbortController();
  const trainer = trainerLoop({
    gatewayUrl: gateway.url,
    rollout: rollout.id,
    signal: stop.signal,
    async handle(req) {
      offered.push(req.prompt_ids);
      const text = SCRIPT[offered.length - 1];
      const output_ids = [...await qwen3!.tokenizer.encode(text), IM_END];
      await postJson(`${gateway.url}/api/requests/${req.request_id}/complete`, {
        output_ids,
        finish_reason: "stop",
      });
    },
  });
  try {
    const first = await openai.chat.completions.create({
      model: "policy",
      messages,
      tools: [weatherTool],
    });
    const asked = first.choices[0].message;
    assert.equal(first.choices[0].finish_reason, "tool_calls");
    assert.equal(asked.tool_calls?.length, 1);
    const call = asked.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    assert.equal(call.function.name, "get_weather");
    assert.deepEqual(JSON.parse(call.function.arguments), { city: "Paris" });
    assert.deepEqual(offered[0], await engineRender(vllm, messages, [weatherTool]));
    messages.push(
      { role: "assistant", content: asked.content, tool_calls: asked.tool_calls },
      { role: "tool", tool_call_id: call.id, content: "sunny, 21 °C" },
    );
    const second = await openai.chat.completions.create({
      model: "policy",
      messages,
      tools: [weatherTool],
    });
    assert.match(second.choices[0].message.content ?? "", /Sunny, 21 °C\.$/);
    assert.deepEqual(offered[1], await engineRender(vllm, messages, [weatherTool]));
    messages.push(
      { role: "assistant", content: second.choices[0].message.content },
      { role: "user", content: "And tomorrow?" },
    );
    const third = await openai.chat.completions.create({
      model: "policy",
      messages,
      tools: [weatherTool],
    });
    assert.equal(third.choices[0].message.content, SCRIPT[2]);
    assert.deepEqual(offered[2], await engineRender(vllm, messages, [weatherTool]));
  } finally {
    stop.abort();
    await trainer.catch(() => {});
  }
  const tree: TurnTreeExport = await api(gateway, "GET", "/rollouts/gate-tools/tree");
  const [t1, t2, t3] = tree.turns;
  assert.deepEqual(tree.turns.map((t) => [t.chain, t.mount]), [
    [0, "root"],
    [0, "extend"],
    [1, "rerendered"],
  ]);
  const rerender = tree.chains[1];
  assert.equal(rerender.label, "rerender");
  assert.equal(rerender.parent, 0);
  assert.equal(rerender.evidence.base_turn, t2.id);
  // Qwen3's template drops the reasoning of the tool loop after the new user message: the
  // render departs at the first id turn 1 sampled.
  assert.equal(rerender.evidence.turn, t1.id);
  assert.equal(rerender.evidence.in, "sampled_ids");
  assert.equal(rerender.evidence.position, t1.prompt_ids.length);
  assert.match(
    (rerender.evidence.text as { recorded: string }).recorded,
    /^<think>\nI will look it up\./,
  );
  const { samples } = await api(gateway, "POST", "/rollouts/gate-tools/finish", { reward: 1 });
  assert.deepEqual(samples.map((s: { branch: string; turns: string[] }) => [s.branch, s.turns]), [
    ["main", [t1.id, t2.id]],
    ["rerender", [t3.id]],
  ]);
  checkLossOwnership(tree, samples);
  // The audit, re-rendering through the same engine: every prompt is the engine's full render,
  // the tool loop extends its parent, and the rerender chain says where it broke.
  const model = await PolicyModel.load({
    family: "engine",
    dir: modelDir,
    rendering: new VllmRender({ url: vllm.url, model: vllm.servedName }),
  });
  const audit = await auditTree(model, tree);
  assert.deepEqual(audit.turns.map((a) => [a.equals_full_render, a.extends_parent]), [
    [true, null],
    [true, true],
    [true, null],
  ]);
  assert.equal(audit.forks.rerender, 1);
  assert.equal(audit.turns[2].fork?.label, "rerender");
}

Deno.test({
  name: "engine render on the real vLLM",
  ignore,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await withServers(async (servers) => {
      await t.step(
        "vLLM backend: a prefix-stable conversation is one chain, trained once, logprobs the engine's",
        () => vllmBackend(servers),
      );
      await t.step(
        "gate: the trainer gets the engine's ids, the engine parses its tool call; dropped " +
          "reasoning starts a rerender chain",
        () => gate(servers),
      );
    });
  },
});
