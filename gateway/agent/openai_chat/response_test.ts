import OpenAI from "openai";
import type { TurnAnswer } from "../../../canonical/mod.ts";
import assert from "node:assert/strict";
import { openaiChatAdapter } from "./mod.ts";
import { loadPiRecords, recordedAnswer } from "./pi_fixture.ts";
import { mapFinishReason, toChatCompletion } from "./response.ts";
import { toCanonicalRequest } from "./to_canonical.ts";

const [first, second] = loadPiRecords();

Deno.test("recorded tool turn as a chat.completion", () => {
  const answer = recordedAnswer(first);
  assert.deepEqual(toChatCompletion(answer, toCanonicalRequest(first.body)), {
    id: "chatcmpl-c895838c2f50bd96e7b5704a",
    object: "chat.completion",
    created: 1795346151,
    model: "policy-model-v1",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: "I will run a command.",
        reasoning_content: "I should run a command.",
        tool_calls: first.reply.tool_calls,
      },
      finish_reason: "tool_calls",
      logprobs: null,
    }],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    },
  });
});

Deno.test("recorded text turn: no tool_calls key, finish stop", () => {
  const body = toChatCompletion(recordedAnswer(second));
  assert.deepEqual(body.choices[0].message, {
    role: "assistant",
    content: "Done: created probe.txt and listed the directory.",
    reasoning_content: "I should answer now.",
  });
  assert.equal(body.choices[0].finish_reason, "stop");
});

const callsOnly: TurnAnswer = {
  id: "t2",
  model: "m",
  created: 5,
  message: {
    role: "assistant",
    content: "",
    reasoning_content: "",
    tool_calls: [
      { id: "call_1", name: "bash", arguments: '{"command": "ls"}' },
      { id: "call_2", name: "apply_patch", arguments: '{"input":"*** Begin"}', kind: "custom" },
    ],
  },
  stopReason: "tool_calls",
  usage: { input_tokens: 3, output_tokens: 4, reasoning_tokens: 1, cached_tokens: 2 },
};

Deno.test("tool calls only: content null, empty reasoning omitted, custom input unwrapped", () => {
  const body = toChatCompletion(callsOnly);
  assert.deepEqual(body.choices[0].message, {
    role: "assistant",
    content: null,
    tool_calls: [
      // The model's own spacing is kept.
      {
        id: "call_1",
        type: "function",
        function: { name: "bash", arguments: '{"command": "ls"}' },
      },
      { id: "call_2", type: "custom", custom: { name: "apply_patch", input: "*** Begin" } },
    ],
  });
  assert.deepEqual(body.usage, {
    prompt_tokens: 3,
    completion_tokens: 4,
    total_tokens: 7,
    prompt_tokens_details: { cached_tokens: 2 },
    completion_tokens_details: { reasoning_tokens: 1 },
  });
});

Deno.test("empty text answer keeps content as an empty string", () => {
  const body = toChatCompletion({
    ...callsOnly,
    message: { role: "assistant", content: "" },
    stopReason: "length",
  });
  assert.deepEqual(body.choices[0].message, { role: "assistant", content: "" });
  assert.equal(body.choices[0].finish_reason, "length");
});

Deno.test("mapFinishReason", () => {
  assert.equal(mapFinishReason("stop"), "stop");
  assert.equal(mapFinishReason("length"), "length");
  assert.equal(mapFinishReason("tool_calls"), "tool_calls");
});

Deno.test("the OpenAI SDK reads the non-streaming body", async () => {
  const req = toCanonicalRequest({ model: "m", messages: [{ role: "user", content: "hi" }] });
  const client = new OpenAI({
    apiKey: "test",
    baseURL: "http://gateway.invalid/v1",
    maxRetries: 0,
    fetch: () => Promise.resolve(Response.json(openaiChatAdapter.toResponseBody(callsOnly, req))),
  });
  const completion = await client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
  });
  const [call] = completion.choices[0].message.tool_calls ?? [];
  assert.equal(call.type, "function");
  assert.equal(call.type === "function" && call.function.arguments, '{"command": "ls"}');
  assert.equal(completion.choices[0].finish_reason, "tool_calls");
  assert.equal(completion.usage?.total_tokens, 7);
});
