/**
 * The official SDKs (`@anthropic-ai/sdk`, `openai`) against a real gateway socket, with the
 * scripted policy playing the trainer: a tool-call turn, then a final answer after the tool
 * result, on each of the three agent protocols, streaming and not.
 *
 * @module
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { Message, ToolSpec } from "../../canonical/mod.ts";
import { pythonJson, type ScriptedPolicy } from "../support/scripted_policy.ts";
import {
  FINAL_REASONING,
  FINAL_TEXT,
  getRollout,
  READ_FILE_TOOL,
  type RolloutHandle,
  startGateway,
  type TestGateway,
  TOOL_ARGS,
  TOOL_REASONING,
  TOOL_RESULT,
} from "./loopback_gateway.ts";

const MODEL = "policy-under-test";
const SYSTEM = "You are a careful coding agent.";
const TASK = "What does the README say?";

const anthropicTools: Anthropic.Tool[] = [{
  name: READ_FILE_TOOL.name,
  description: READ_FILE_TOOL.description,
  input_schema: READ_FILE_TOOL.parameters as Anthropic.Tool.InputSchema,
}];
const chatTools: OpenAI.Chat.ChatCompletionTool[] = [{
  type: "function",
  function: READ_FILE_TOOL,
}];
const responsesTools: OpenAI.Responses.FunctionTool[] = [{
  type: "function",
  ...READ_FILE_TOOL,
  strict: false,
}];
/** The tool list as the gateway renders it, for full renders in the tests. */
const canonicalTools: ToolSpec[] = [{
  name: READ_FILE_TOOL.name,
  description: READ_FILE_TOOL.description,
  parameters: READ_FILE_TOOL.parameters,
  kind: "function",
}];

/** No retries (a retry would hide a failure) and a timeout, so a parked request fails the test. */
const CLIENT = { maxRetries: 0, timeout: 10_000 };

/** An Anthropic client; `baseURL` is the rollout's base URL or the bare gateway URL. */
function anthropicClient(r: { base_url: string; token: string }): Anthropic {
  return new Anthropic({ baseURL: r.base_url, apiKey: r.token, ...CLIENT });
}

/** An OpenAI client on `<base>/v1`. */
function openaiClient(r: { base_url: string; token: string }): OpenAI {
  return new OpenAI({ baseURL: `${r.base_url}/v1`, apiKey: r.token, ...CLIENT });
}

/** A gateway, a rollout and a scripted policy serving only that rollout. */
async function scenario(
  fn: (s: { gw: TestGateway; rollout: RolloutHandle; policy: ScriptedPolicy }) => Promise<void>,
): Promise<void> {
  const gw = await startGateway();
  try {
    const rollout = await gw.rollout();
    const policy = gw.policy(undefined, { rollout: rollout.id });
    await fn({ gw, rollout, policy });
  } finally {
    await gw.close();
  }
}

/**
 * The recorded turns agree with what the SDK reported: prompt length = usage input tokens,
 * output length = usage output tokens = ids the policy produced; the second turn extends the
 * first with the first turn's sampled ids verbatim.
 */
async function assertTwoTurns(
  gw: TestGateway,
  rollout: RolloutHandle,
  policy: ScriptedPolicy,
  usage: { input: number; output: number }[],
): Promise<void> {
  const { turn_list: turns } = await getRollout(gw, rollout.id);
  assert.equal(turns.length, 2);
  assert.equal(policy.records.length, 2);
  usage.forEach(({ input, output }, i) => {
    assert.equal(turns[i].status, "done");
    assert.equal(input, turns[i].prompt_length, `turn ${i} input tokens`);
    assert.equal(input, policy.records[i].prompt_ids.length, `turn ${i} prompt ids`);
    assert.equal(output, policy.records[i].output_ids.length, `turn ${i} output tokens`);
    assert.equal(turns[i].output_length, output);
  });
  assert.equal(turns[0].mount, "root");
  assert.equal(turns[1].mount, "extend");
  assert.equal(turns[1].parent, turns[0].id);
  const [first, second] = policy.records;
  assert.deepEqual(
    second.prompt_ids.slice(0, first.prompt_ids.length + first.output_ids.length),
    [...first.prompt_ids, ...first.output_ids],
  );
}

// ---------------------------------------------------------------- Anthropic Messages

function anthropicFirst(stream: boolean) {
  return {
    model: MODEL,
    max_tokens: 512,
    system: SYSTEM,
    tools: anthropicTools,
    messages: [{ role: "user", content: TASK }] as Anthropic.MessageParam[],
    stream,
  };
}

/** The history after the tool call, echoing the assistant's blocks as Claude Code does. */
function anthropicSecond(first: Anthropic.Message): Anthropic.MessageParam[] {
  const echoed: Anthropic.ContentBlockParam[] = first.content.map((b) => {
    switch (b.type) {
      case "thinking":
        return { type: "thinking", thinking: b.thinking, signature: b.signature };
      case "tool_use":
        return { type: "tool_use", id: b.id, name: b.name, input: b.input };
      case "text":
        return { type: "text", text: b.text };
      default:
        throw new Error(`unexpected block ${b.type}`);
    }
  });
  const toolUse = first.content.find((b) => b.type === "tool_use")!;
  return [
    { role: "user", content: TASK },
    { role: "assistant", content: echoed },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: toolUse.id, content: TOOL_RESULT }],
    },
  ];
}

function assertAnthropicToolTurn(m: Anthropic.Message): void {
  assert.equal(m.role, "assistant");
  assert.equal(m.model, MODEL);
  assert.equal(m.stop_reason, "tool_use");
  assert.deepEqual(m.content.map((b) => b.type), ["thinking", "tool_use"]);
  const [thinking, toolUse] = m.content;
  assert.ok(thinking.type === "thinking" && toolUse.type === "tool_use");
  assert.equal(thinking.thinking, TOOL_REASONING);
  assert.ok(thinking.signature.length > 0);
  assert.equal(toolUse.name, READ_FILE_TOOL.name);
  assert.deepEqual(toolUse.input, TOOL_ARGS);
  assert.match(toolUse.id, /^toolu_/);
}

function assertAnthropicFinalTurn(m: Anthropic.Message): void {
  assert.equal(m.stop_reason, "end_turn");
  assert.deepEqual(m.content.map((b) => b.type), ["thinking", "text"]);
  const [thinking, text] = m.content;
  assert.ok(thinking.type === "thinking" && text.type === "text");
  assert.equal(thinking.thinking, FINAL_REASONING);
  assert.equal(text.text, FINAL_TEXT);
}

Deno.test("anthropic SDK, non-streaming: tool call, then final answer", async () => {
  await scenario(async ({ gw, rollout, policy }) => {
    const client = anthropicClient(rollout);
    const first = await client.messages.create({ ...anthropicFirst(false), stream: false });
    assertAnthropicToolTurn(first);
    const second = await client.messages.create({
      ...anthropicFirst(false),
      stream: false,
      messages: anthropicSecond(first),
    });
    assertAnthropicFinalTurn(second);
    assert.notEqual(second.id, first.id);
    await assertTwoTurns(
      gw,
      rollout,
      policy,
      [first, second].map((m) => ({
        input: m.usage.input_tokens,
        output: m.usage.output_tokens,
      })),
    );
  });
});

Deno.test("anthropic SDK, streaming: tool call, then final answer", async () => {
  await scenario(async ({ gw, rollout, policy }) => {
    const client = anthropicClient(rollout);
    const run = async (messages: Anthropic.MessageParam[]) => {
      const stream = client.messages.stream({ ...anthropicFirst(true), messages });
      const types: string[] = [];
      const deltas: string[] = [];
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "content_block_delta") deltas.push(event.delta.type);
      }
      assert.equal(types[0], "message_start");
      assert.equal(types.at(-1), "message_stop");
      return { message: await stream.finalMessage(), deltas };
    };
    const first = await run(anthropicFirst(true).messages);
    assertAnthropicToolTurn(first.message);
    assert.ok(first.deltas.includes("thinking_delta"));
    assert.ok(first.deltas.includes("signature_delta"));
    assert.ok(first.deltas.includes("input_json_delta"));
    const second = await run(anthropicSecond(first.message));
    assertAnthropicFinalTurn(second.message);
    assert.ok(second.deltas.includes("text_delta"));
    await assertTwoTurns(
      gw,
      rollout,
      policy,
      [first, second].map(({ message: m }) => ({
        input: m.usage.input_tokens,
        output: m.usage.output_tokens,
      })),
    );
  });
});

Deno.test("anthropic SDK: a non-streaming retry of a streamed request replays the recorded answer", async () => {
  await scenario(async ({ gw, rollout, policy }) => {
    const client = anthropicClient(rollout);
    const streamed = await client.messages.stream(anthropicFirst(true)).finalMessage();
    assertAnthropicToolTurn(streamed);
    // Nobody plays the trainer any more: a second generation would never be answered.
    await policy.stop();
    const retried = await client.messages.create(
      { ...anthropicFirst(false), stream: false },
      { timeout: 5000 },
    );
    assert.equal(retried.id, streamed.id);
    assert.deepEqual(retried.content, streamed.content);
    assert.equal(retried.stop_reason, "tool_use");
    assert.deepEqual(retried.usage, {
      ...streamed.usage,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    assert.equal(await gw.gw.rollouts.pendingRequests(), 0);
    const next = await gw.api("GET", "/requests/next?wait=0");
    assert.equal(next.status, 204);
    assert.equal(policy.records.length, 1);
    const { turn_list: turns, turns: counts } = await getRollout(gw, rollout.id);
    assert.equal(turns.length, 1);
    assert.deepEqual(counts, { total: 1, done: 1, pending: 0, failed: 0 });
  });
});

Deno.test("anthropic SDK: countTokens is the real prompt length and records nothing", async () => {
  await scenario(async ({ gw, rollout, policy }) => {
    const client = anthropicClient(rollout);
    const { model } = gw.gw;
    const history: Message[] = [
      { role: "system", content: SYSTEM },
      { role: "user", content: TASK },
    ];
    const full = await model.renderFull(history, canonicalTools);
    const counted = await client.messages.countTokens({
      model: MODEL,
      system: SYSTEM,
      tools: anthropicTools,
      messages: [{ role: "user", content: TASK }],
    });
    assert.equal(counted.input_tokens, full.ids.length);
    assert.equal((await getRollout(gw, rollout.id)).turn_list.length, 0);
    assert.equal(await gw.gw.rollouts.pendingRequests(), 0);

    // Without tools the prompt is shorter: the count really depends on the request.
    const bare = await client.messages.countTokens({
      model: MODEL,
      messages: [{ role: "user", content: TASK }],
    });
    const bareFull = await model.renderFull([{ role: "user", content: TASK }], []);
    assert.equal(bare.input_tokens, bareFull.ids.length);
    assert.ok(bare.input_tokens < counted.input_tokens);

    const first = await client.messages.create({ ...anthropicFirst(false), stream: false });
    assert.equal(first.usage.input_tokens, counted.input_tokens);
    assert.deepEqual(policy.records[0].prompt_ids, full.ids);

    // The history after the tool call: counted before it is sent, then sent.
    const messages = anthropicSecond(first);
    const before = await client.messages.countTokens({
      model: MODEL,
      system: SYSTEM,
      tools: anthropicTools,
      messages,
    });
    assert.equal((await getRollout(gw, rollout.id)).turn_list.length, 1);
    const second = await client.messages.create({
      ...anthropicFirst(false),
      stream: false,
      messages,
    });
    const { turn_list: turns } = await getRollout(gw, rollout.id);
    assert.equal(before.input_tokens, turns[1].prompt_length);
    assert.equal(second.usage.input_tokens, before.input_tokens);
    // Recounting a recorded request gives the recorded length.
    const again = await client.messages.countTokens({
      model: MODEL,
      system: SYSTEM,
      tools: anthropicTools,
      messages,
    });
    assert.equal(again.input_tokens, turns[1].prompt_length);

    // Qwen3 keeps the reasoning of tool-call turns after the last user message, so here the
    // bridged prompt equals a full render of the same history.
    const toolUse = first.content.find((b) => b.type === "tool_use")!;
    assert.ok(toolUse.type === "tool_use");
    const secondFull = await model.renderFull([
      ...history,
      {
        role: "assistant",
        content: "",
        reasoning_content: TOOL_REASONING,
        tool_calls: [{
          id: toolUse.id,
          name: READ_FILE_TOOL.name,
          // The arguments as the policy sampled them (Python spacing), not as the client echoes.
          arguments: pythonJson(TOOL_ARGS),
        }],
      },
      { role: "tool", content: TOOL_RESULT, tool_call_id: toolUse.id },
    ], canonicalTools);
    assert.equal(before.input_tokens, secondFull.ids.length);
    assert.deepEqual(policy.records[1].prompt_ids, secondFull.ids);
  });
});

// ---------------------------------------------------------------- OpenAI Chat Completions

type ChatAssistant = OpenAI.Chat.ChatCompletionAssistantMessageParam & {
  reasoning_content?: string;
};

interface ChatTurn {
  reasoning: string;
  content: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
  finish: string;
  usage: { prompt_tokens: number; completion_tokens: number };
}

const chatFirst: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: "system", content: SYSTEM },
  { role: "user", content: TASK },
];

function chatSecond(first: ChatTurn): OpenAI.Chat.ChatCompletionMessageParam[] {
  const assistant: ChatAssistant = {
    role: "assistant",
    content: first.content,
    reasoning_content: first.reasoning,
    tool_calls: first.toolCalls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    })),
  };
  return [
    ...chatFirst,
    assistant,
    { role: "tool", tool_call_id: first.toolCalls[0].id, content: TOOL_RESULT },
  ];
}

function assertChatToolTurn(t: ChatTurn): void {
  assert.equal(t.finish, "tool_calls");
  assert.equal(t.reasoning, TOOL_REASONING);
  assert.ok(t.content === null || t.content === "", `content ${t.content}`);
  assert.equal(t.toolCalls.length, 1);
  assert.equal(t.toolCalls[0].name, READ_FILE_TOOL.name);
  assert.deepEqual(JSON.parse(t.toolCalls[0].arguments), TOOL_ARGS);
  assert.match(t.toolCalls[0].id, /^call_/);
}

function assertChatFinalTurn(t: ChatTurn): void {
  assert.equal(t.finish, "stop");
  assert.equal(t.reasoning, FINAL_REASONING);
  assert.equal(t.content, FINAL_TEXT);
  assert.deepEqual(t.toolCalls, []);
}

async function chatOnce(
  client: OpenAI,
  messages: OpenAI.Chat.ChatCompletionMessageParam[],
): Promise<ChatTurn> {
  const c = await client.chat.completions.create({ model: MODEL, messages, tools: chatTools });
  assert.equal(c.object, "chat.completion");
  assert.equal(c.model, MODEL);
  assert.equal(c.choices.length, 1);
  const message = c.choices[0].message as ChatAssistant & OpenAI.Chat.ChatCompletionMessage;
  assert.ok(c.usage);
  return {
    reasoning: message.reasoning_content ?? "",
    content: message.content,
    toolCalls: (message.tool_calls ?? []).map((call) => {
      assert.equal(call.type, "function");
      assert.ok(call.type === "function");
      return { id: call.id, name: call.function.name, arguments: call.function.arguments };
    }),
    finish: c.choices[0].finish_reason,
    usage: c.usage,
  };
}

/** Accumulates a chat stream chunk by chunk, as pi does (the SDK helper drops reasoning deltas). */
async function chatStreamed(
  client: OpenAI,
  messages: OpenAI.Chat.ChatCompletionMessageParam[],
): Promise<ChatTurn> {
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages,
    tools: chatTools,
    stream: true,
    stream_options: { include_usage: true },
  });
  const turn: ChatTurn = {
    reasoning: "",
    content: null,
    toolCalls: [],
    finish: "",
    usage: { prompt_tokens: -1, completion_tokens: -1 },
  };
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    assert.equal(chunk.object, "chat.completion.chunk");
    if (chunk.usage) turn.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta = choice.delta as typeof choice.delta & { reasoning_content?: string };
      if (delta.reasoning_content) turn.reasoning += delta.reasoning_content;
      if (delta.content) turn.content = (turn.content ?? "") + delta.content;
      for (const call of delta.tool_calls ?? []) {
        const slot = turn.toolCalls[call.index] ??= { id: "", name: "", arguments: "" };
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.arguments += call.function.arguments;
      }
      if (choice.finish_reason) turn.finish = choice.finish_reason;
    }
  }
  assert.ok(chunks >= 4, `only ${chunks} chunks`);
  return turn;
}

for (const streaming of [false, true]) {
  Deno.test(`openai SDK chat.completions, ${streaming ? "streaming" : "non-streaming"}: tool call, then final answer`, async () => {
    await scenario(async ({ gw, rollout, policy }) => {
      const client = openaiClient(rollout);
      const run = streaming ? chatStreamed : chatOnce;
      const first = await run(client, chatFirst);
      assertChatToolTurn(first);
      const second = await run(client, chatSecond(first));
      assertChatFinalTurn(second);
      await assertTwoTurns(
        gw,
        rollout,
        policy,
        [first, second].map(({ usage }) => ({
          input: usage.prompt_tokens,
          output: usage.completion_tokens,
        })),
      );
    });
  });
}

// ---------------------------------------------------------------- OpenAI Responses

function responsesParams(input: OpenAI.Responses.ResponseInputItem[]) {
  return { model: MODEL, instructions: SYSTEM, input, tools: responsesTools };
}

const responsesFirst: OpenAI.Responses.ResponseInputItem[] = [
  { role: "user", content: TASK },
];

/** The next input, echoing the output items the way Codex does. */
function responsesSecond(first: OpenAI.Responses.Response): OpenAI.Responses.ResponseInputItem[] {
  const echoed = first.output.map((item): OpenAI.Responses.ResponseInputItem => {
    switch (item.type) {
      case "reasoning":
        return {
          type: "reasoning",
          id: item.id,
          summary: item.summary,
          encrypted_content: item.encrypted_content,
        };
      case "function_call":
        return {
          type: "function_call",
          id: item.id,
          call_id: item.call_id,
          name: item.name,
          arguments: item.arguments,
        };
      default:
        throw new Error(`unexpected output item ${item.type}`);
    }
  });
  const call = first.output.find((item) => item.type === "function_call")!;
  assert.ok(call.type === "function_call");
  return [
    ...responsesFirst,
    ...echoed,
    { type: "function_call_output", call_id: call.call_id, output: TOOL_RESULT },
  ];
}

function assertResponsesToolTurn(r: OpenAI.Responses.Response): void {
  assert.equal(r.object, "response");
  assert.equal(r.status, "completed");
  assert.equal(r.model, MODEL);
  assert.deepEqual(r.output.map((item) => item.type), ["reasoning", "function_call"]);
  const [reasoning, call] = r.output;
  assert.ok(reasoning.type === "reasoning" && call.type === "function_call");
  assert.deepEqual(reasoning.summary.map((s) => s.text), [TOOL_REASONING]);
  assert.equal(call.name, READ_FILE_TOOL.name);
  assert.deepEqual(JSON.parse(call.arguments), TOOL_ARGS);
  assert.match(call.call_id, /^call_/);
}

function assertResponsesFinalTurn(r: OpenAI.Responses.Response): void {
  assert.equal(r.status, "completed");
  assert.deepEqual(r.output.map((item) => item.type), ["reasoning", "message"]);
  const [reasoning, message] = r.output;
  assert.ok(reasoning.type === "reasoning" && message.type === "message");
  assert.deepEqual(reasoning.summary.map((s) => s.text), [FINAL_REASONING]);
  assert.deepEqual(message.content.map((c) => c.type === "output_text" ? c.text : c.type), [
    FINAL_TEXT,
  ]);
  assert.equal(r.output_text, FINAL_TEXT);
}

Deno.test("openai SDK responses, non-streaming: tool call, then final answer", async () => {
  await scenario(async ({ gw, rollout, policy }) => {
    const client = openaiClient(rollout);
    const first = await client.responses.create(responsesParams(responsesFirst));
    assertResponsesToolTurn(first);
    const second = await client.responses.create(responsesParams(responsesSecond(first)));
    assertResponsesFinalTurn(second);
    await assertTwoTurns(
      gw,
      rollout,
      policy,
      [first, second].map(({ usage }) => {
        assert.ok(usage);
        return { input: usage.input_tokens, output: usage.output_tokens };
      }),
    );
  });
});

Deno.test("openai SDK responses, streaming: tool call, then final answer", async () => {
  await scenario(async ({ gw, rollout, policy }) => {
    const client = openaiClient(rollout);
    const run = async (input: OpenAI.Responses.ResponseInputItem[]) => {
      const stream = client.responses.stream(responsesParams(input));
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      assert.equal(types[0], "response.created");
      assert.equal(types.at(-1), "response.completed");
      return { response: await stream.finalResponse(), types };
    };
    const first = await run(responsesFirst);
    assertResponsesToolTurn(first.response);
    assert.ok(first.types.includes("response.reasoning_summary_text.delta"));
    assert.ok(first.types.includes("response.function_call_arguments.done"));
    const second = await run(responsesSecond(first.response));
    assertResponsesFinalTurn(second.response);
    assert.ok(second.types.includes("response.output_text.delta"));
    await assertTwoTurns(
      gw,
      rollout,
      policy,
      [first, second].map(({ response: { usage } }) => {
        assert.ok(usage);
        return { input: usage.input_tokens, output: usage.output_tokens };
      }),
    );
  });
});

// ---------------------------------------------------------------- models, bare /v1

Deno.test("models.list works with both SDKs, under /rollout/<id> and bare /v1", async () => {
  await scenario(async ({ gw, rollout }) => {
    const bare = { ...rollout, base_url: gw.url };
    for (const r of [rollout, bare]) {
      const anthropicModels = [];
      for await (const m of anthropicClient(r).models.list()) anthropicModels.push(m.id);
      assert.deepEqual(anthropicModels, ["rollgate-policy"]);
      const openaiModels = [];
      for await (const m of openaiClient(r).models.list()) openaiModels.push(m.id);
      assert.deepEqual(openaiModels, ["rollgate-policy"]);
    }
    assert.equal((await getRollout(gw, rollout.id)).turn_list.length, 0);
  });
});

Deno.test("bare /v1 with the rollout token as API key reaches that rollout", async () => {
  const gw = await startGateway();
  try {
    const mine = await gw.rollout();
    const other = await gw.rollout();
    const policy = gw.policy();
    const bareAnthropic = anthropicClient({ base_url: gw.url, token: mine.token });
    const bareOpenai = openaiClient({ base_url: gw.url, token: mine.token });

    const m = await bareAnthropic.messages.create({ ...anthropicFirst(false), stream: false });
    assertAnthropicToolTurn(m);
    const counted = await bareAnthropic.messages.countTokens({
      model: MODEL,
      system: SYSTEM,
      tools: anthropicTools,
      messages: [{ role: "user", content: TASK }],
    });
    assert.equal(counted.input_tokens, m.usage.input_tokens);
    // Other histories than the Anthropic one: the same history would replay its recorded turn.
    const c = await chatOnce(bareOpenai, [chatFirst[0], {
      role: "user",
      content: "chat: " + TASK,
    }]);
    assertChatToolTurn(c);
    const r = await bareOpenai.responses.create(
      responsesParams([{ role: "user", content: "responses: " + TASK }]),
    );
    assertResponsesToolTurn(r);

    const { turn_list: turns } = await getRollout(gw, mine.id);
    assert.equal(turns.length, 3);
    assert.deepEqual(
      turns.map((t: { prompt_length: number }) => t.prompt_length),
      [m.usage.input_tokens, c.usage.prompt_tokens, r.usage!.input_tokens],
    );
    assert.ok(policy.records.every((rec) => rec.rollout_id === mine.id));
    assert.equal((await getRollout(gw, other.id)).turn_list.length, 0);

    // The other rollout's token on the same bare URL lands in the other rollout.
    const otherClient = openaiClient({ base_url: gw.url, token: other.token });
    assertChatToolTurn(await chatOnce(otherClient, chatFirst));
    assert.equal((await getRollout(gw, other.id)).turn_list.length, 1);
    assert.equal((await getRollout(gw, mine.id)).turn_list.length, 3);

    // A key that is no rollout's token is refused with the SDK's authentication error.
    const stranger = anthropicClient({ base_url: gw.url, token: "sk-nobody" });
    await assert.rejects(
      stranger.messages.create({ ...anthropicFirst(false), stream: false }),
      (e) => e instanceof Anthropic.AuthenticationError && e.status === 401,
    );
  } finally {
    await gw.close();
  }
});
