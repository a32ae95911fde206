/**
 * Engine-rendered prompts (`--model-family engine`) through the real `RolloutActions`, turn
 * runner, SQLite journal and restore, with a rendering TEST DOUBLE: rollgate's own Qwen3 family
 * plays the engine (the model's Jinja template and tokenizer, which vLLM's render gives id for id:
 * `generation/vllm_render_wire_test.ts`), and the in-memory backend double samples the ids the
 * Qwen3 template writes. The real vLLM: `tests/engine/engine_render_test.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { AssistantMessage, CanonicalRequest, Message, ToolSpec } from "../../canonical/mod.ts";
import { type EngineRendering, PolicyModel, qwen3SampledText } from "../../model/mod.ts";
import { GenerationError } from "../../generation/mod.ts";
import { promptIds, RolloutActions, turnTree } from "../../trajectory/mod.ts";
import { SqliteJournal } from "../../journal/mod.ts";
import { InMemoryBackendTestDouble } from "../support/in_memory_backend.ts";
import { checkLossOwnership } from "../support/loss_ownership.ts";

const qwen3 = await PolicyModel.load();

/** TEST DOUBLE of an engine that renders: Qwen3's template and parser, counting its calls. */
function qwen3Engine(fail?: Error): EngineRendering & { renders: number } {
  const engine = {
    where: "a Qwen3 engine test double",
    renders: 0,
    async render(r: Parameters<EngineRendering["render"]>[0]) {
      engine.renders++;
      if (fail) throw fail;
      const model = await qwen3.withTemplate(r.templateKwargs);
      return (await model.renderFull(r.messages, r.tools, r.addGenerationPrompt)).ids;
    },
    async parse(r: Parameters<EngineRendering["parse"]>[0]) {
      const { message } = await qwen3.parse(r.outputIds, () => "unused", r.tools);
      return {
        content: message.content,
        ...(message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
        toolCalls: (message.tool_calls ?? []).map(({ name, arguments: a }) => ({
          name,
          arguments: a,
        })),
      };
    },
  };
  return engine;
}

const tools: ToolSpec[] = [{ name: "bash", kind: "function", parameters: { type: "object" } }];
const task: Message = { role: "user", content: "List the files." };
const call: AssistantMessage = {
  role: "assistant",
  content: "",
  reasoning_content: "Run ls.",
  tool_calls: [{ id: "x", name: "bash", arguments: '{"command": "ls"}' }],
};
const done: AssistantMessage = {
  role: "assistant",
  content: "Two files.",
  reasoning_content: "Done.",
};

function request(messages: Message[]): CanonicalRequest {
  return { protocol: "chat", model: "policy", messages, tools, sampling: {}, stream: false };
}

async function gateway(dir: string, engine = qwen3Engine()) {
  const model = await PolicyModel.load({ family: "engine", rendering: engine });
  const backend = new InMemoryBackendTestDouble();
  const journal = new SqliteJournal(dir);
  const rollouts = new RolloutActions({ model, backend, journal });
  const sample = async (m: AssistantMessage) =>
    backend.enqueue({
      output_ids: await qwen3.tokenizer.encode(qwen3SampledText(m)),
      logprobs: [],
      finish_reason: "stop",
    });
  return { model, backend, journal, rollouts, engine, sample };
}

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-engine-render-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A tool loop (two turns), then a new user message after reasoning; returns the turns. */
async function conversation(g: Awaited<ReturnType<typeof gateway>>) {
  const rollout = await g.rollouts.create({ id: "r" });
  await g.sample(call);
  const t1 = await g.rollouts.startTurn(rollout, request([task]), "call_");
  await t1.result;
  const result: Message = {
    role: "tool",
    content: "a.py\nb.py",
    tool_call_id: t1.message!.tool_calls![0].id,
  };
  await g.sample(done);
  const t2 = await g.rollouts.startTurn(rollout, request([task, t1.message!, result]), "call_");
  await t2.result;
  await g.sample(done);
  const history = [
    task,
    t1.message!,
    result,
    t2.message!,
    { role: "user", content: "And now?" } as Message,
  ];
  const t3 = await g.rollouts.startTurn(rollout, request(history), "call_");
  await t3.result;
  return { rollout, t1, t2, t3, history };
}

Deno.test("engine family: a tool loop is one chain; dropped reasoning starts a rerender chain, labelled where it breaks", async () => {
  await withDir(async (dir) => {
    const g = await gateway(dir);
    const { rollout, t1, t2, t3, history } = await conversation(g);
    assert.equal(g.engine.renders, 3, "one engine render per turn");
    // The tool loop: the engine's render extends the first turn's prompt + output.
    assert.equal(t2.mount, "extend");
    assert.equal(t2.chain, t1.chain);
    assert.deepEqual(
      Array.from(promptIds(t2)),
      (await qwen3.renderFull([task, t1.message!, {
        role: "tool",
        content: "a.py\nb.py",
        tool_call_id: t1.message!.tool_calls![0].id,
      }], tools)).ids,
    );
    assert.equal(t2.header!.cachedTokens, t1.promptLength + t1.outputIds.length);
    // After a new user message Qwen3's template drops both turns' reasoning: a new chain.
    assert.equal(t3.mount, "rerendered");
    assert.equal(t3.parent, null);
    assert.deepEqual(Array.from(promptIds(t3)), (await qwen3.renderFull(history, tools)).ids);
    assert.equal(t3.header!.cachedTokens, 0);
    const chain = rollout.chains[t3.chain];
    assert.equal(chain.label, "rerender");
    assert.equal(chain.parent, t1.chain);
    const e = chain.evidence;
    assert.equal(e.base_turn, t2.id);
    // The first difference: the first sampled id of turn 1 (its `<think>`), which the render drops.
    assert.equal(e.position, t1.promptLength);
    assert.equal(e.turn, t1.id);
    assert.equal(e.in, "sampled_ids");
    assert.equal(e.continues, "main");
    assert.match((e.text as { recorded: string }).recorded, /^<think>\nRun ls\.\n<\/think>/);
    assert.doesNotMatch((e.text as { rendered: string }).rendered, /<think>/);
    // Two samples: the tool loop's, and the rerender chain's from the engine's render; every
    // sampled id trained in exactly one.
    const samples = await g.rollouts.finish(rollout, 1);
    assert.deepEqual(samples.map((s) => [s.branch, s.turns, s.trained_from]), [
      ["main", [t1.id, t2.id], 0],
      ["rerender", [t3.id], 0],
    ]);
    assert.deepEqual(samples[1].parent, { chain: t1.chain, turn: t2.id });
    checkLossOwnership(turnTree(rollout), samples);
    g.journal.close();
  });
});

Deno.test("engine family: restored from the journal, the same chains, labels and samples", async () => {
  await withDir(async (dir) => {
    const g = await gateway(dir);
    const { rollout } = await conversation(g);
    const before = JSON.stringify({ chains: turnTree(rollout).chains, samples: rollout.samples() });
    await g.rollouts.durable();
    g.journal.close();
    const again = await gateway(dir);
    await again.rollouts.restore();
    const restored = again.rollouts.require("r");
    assert.equal(
      JSON.stringify({ chains: turnTree(restored).chains, samples: restored.samples() }),
      before,
    );
    assert.equal(again.engine.renders, 0, "a restore renders nothing");
    again.journal.close();
  });
});

Deno.test("engine family: a refused render is a render failure (400); an unreachable engine its own error", async () => {
  await withDir(async (dir) => {
    const refused = await gateway(
      dir,
      qwen3Engine(new Error("vLLM refused the conversation (400)")),
    );
    const rollout = await refused.rollouts.create({ id: "a" });
    await assert.rejects(refused.rollouts.startTurn(rollout, request([task]), "call_"), {
      name: "TurnError",
      kind: "render_failed",
    });
    refused.journal.close();
  });
  await withDir(async (dir) => {
    const down = await gateway(
      dir,
      qwen3Engine(new GenerationError("engine_failed", "unreachable")),
    );
    const rollout = await down.rollouts.create({ id: "b" });
    await assert.rejects(down.rollouts.startTurn(rollout, request([task]), "call_"), {
      name: "GenerationError",
      kind: "engine_failed",
    });
    assert.equal(rollout.turns[0].status, "failed");
    down.journal.close();
  });
});

Deno.test("engine family: count_tokens is the engine's render, with the rollout's template settings; split_special_tokens is refused", async () => {
  await withDir(async (dir) => {
    const g = await gateway(dir);
    const rollout = await g.rollouts.create({ id: "c" });
    assert.equal(
      await g.rollouts.countTokens(rollout, request([task])),
      (await qwen3.renderFull([task], tools)).ids.length,
    );
    // A rollout's template settings reach the engine (as vLLM's chat_template_kwargs).
    const noThinking = await g.rollouts.create({ id: "e", template: { enable_thinking: false } });
    const withoutThinking = await qwen3.withTemplate({ enable_thinking: false });
    assert.equal(
      await g.rollouts.countTokens(noThinking, request([task])),
      (await withoutThinking.renderFull([task], tools)).ids.length,
    );
    const split = await g.rollouts.create({ id: "d", splitSpecialTokens: true });
    await assert.rejects(g.rollouts.startTurn(split, request([task]), "call_"), {
      kind: "render_failed",
      message: /split_special_tokens is not available with --model-family engine/,
    });
    g.journal.close();
  });
});
