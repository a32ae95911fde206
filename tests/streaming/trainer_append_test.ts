/**
 * Real streaming through the interception gate: the trainer appends sampled ids as its engine
 * produces them (`POST /api/requests/:id/append`) and the agent's SSE stream carries the text
 * before the completion arrives; the final answer and the recorded turn are those of the
 * complete output.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { parseSseText } from "../../generation/mod.ts";
import { startGateway, type TestGateway } from "../api/loopback_gateway.ts";
import { answerText, sharedModel, toolCallText } from "../support/scripted_policy.ts";

const model = await sharedModel();

/** Takes the next pending request of a rollout. */
async function take(gw: TestGateway, rollout: string) {
  const r = await gw.api("GET", `/requests/next?wait=10&rollout=${rollout}`);
  assert.equal(r.status, 200);
  return r.json as { request_id: string; prompt_ids: number[] };
}

/** Reads an SSE body until `until` matches the text so far; returns what was read. */
async function readUntil(reader: ReadableStreamDefaultReader<string>, until: RegExp) {
  let text = "";
  while (!until.test(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  return text;
}

Deno.test("append: chat deltas reach the agent before the completion", async () => {
  const gw = await startGateway();
  try {
    const r = await gw.rollout();
    const res = fetch(`${r.base_url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}` },
      body: JSON.stringify({
        model: "m",
        stream: true,
        messages: [{ role: "user", content: "Greet me." }],
      }),
    });
    const req = await take(gw, r.id);
    const reply = answerText("The user wants a greeting.", "Hello there, friend!");
    const ids = await model.tokenizer.encode(reply);
    const half = Math.floor(ids.length / 2);
    const first = await gw.api("POST", `/requests/${req.request_id}/append`, {
      output_ids: ids.slice(0, half),
    });
    assert.equal(first.status, 200);
    const body = (await res).body!.pipeThrough(new TextDecoderStream()).getReader();
    const early = await readUntil(body, /"reasoning_content":"The user/);
    assert.match(early, /reasoning_content/, "reasoning streamed before the completion");
    assert.doesNotMatch(early, /finish_reason":"stop"/);

    // A completion that does not extend what was appended is refused; the right one is taken.
    const wrong = await gw.api("POST", `/requests/${req.request_id}/complete`, {
      output_ids: ids.slice(1),
      finish_reason: "stop",
    });
    assert.equal(wrong.status, 400);
    assert.match(wrong.json.error.message, /must start with the \d+ ids appended/);
    const done = await gw.api("POST", `/requests/${req.request_id}/complete`, {
      output_ids: ids,
      finish_reason: "stop",
    });
    assert.equal(done.status, 200);
    const rest = early + await readUntil(body, /\[DONE\]/);
    await body.cancel();
    const chunks = parseSseText(rest).events.filter((e) => e.data.startsWith("{"))
      .map((e) => JSON.parse(e.data));
    const joined = (k: string) => chunks.map((c) => c.choices[0]?.delta?.[k] ?? "").join("");
    assert.equal(joined("reasoning_content"), "The user wants a greeting.");
    assert.equal(joined("content"), "Hello there, friend!");
    const turns = (await gw.api("GET", `/rollouts/${r.id}`)).json.turn_list;
    assert.equal(turns.length, 1);
    assert.equal(turns[0].output_length, ids.length);
  } finally {
    await gw.close();
  }
});

Deno.test("append: Anthropic and Responses streams rebuilt by the official SDKs equal the answer", async () => {
  const gw = await startGateway();
  try {
    const tools = [{ name: "bash", description: "run", input_schema: { type: "object" as const } }];
    const reply = toolCallText("Check the files.", "bash", { command: "ls -a" }, "Listing now.");
    const ids = await model.tokenizer.encode(reply);

    // Anthropic: the SDK's MessageStream accumulates the streamed events.
    const a = await gw.rollout();
    const anthropic = new Anthropic({ baseURL: a.base_url, apiKey: a.token, maxRetries: 0 });
    const stream = anthropic.messages.stream({
      model: "m",
      max_tokens: 100,
      messages: [{ role: "user", content: "List the files." }],
      tools,
    });
    const req = await take(gw, a.id);
    for (let i = 0; i < ids.length; i += 3) {
      await gw.api("POST", `/requests/${req.request_id}/append`, {
        output_ids: ids.slice(i, i + 3),
      });
    }
    await gw.api("POST", `/requests/${req.request_id}/complete`, {
      output_ids: ids,
      finish_reason: "stop",
    });
    const message = await stream.finalMessage();
    assert.deepEqual(message.content.map((b) => b.type), ["thinking", "text", "tool_use"]);
    const [thinking, text, tool] = message.content as unknown as [
      { thinking: string },
      { text: string },
      { name: string; input: unknown },
    ];
    assert.equal(thinking.thinking, "Check the files.");
    assert.equal(text.text, "Listing now.");
    assert.deepEqual([tool.name, tool.input], ["bash", { command: "ls -a" }]);
    assert.equal(message.stop_reason, "tool_use");

    // Responses: the SDK's ResponseStream.
    const o = await gw.rollout();
    const openai = new OpenAI({ baseURL: o.base_url + "/v1", apiKey: o.token, maxRetries: 0 });
    const rs = openai.responses.stream({
      model: "m",
      input: "List the files.",
      tools: [{ type: "function", name: "bash", parameters: { type: "object" }, strict: false }],
    });
    const req2 = await take(gw, o.id);
    for (let i = 0; i < ids.length; i += 5) {
      await gw.api("POST", `/requests/${req2.request_id}/append`, {
        output_ids: ids.slice(i, i + 5),
      });
    }
    await gw.api("POST", `/requests/${req2.request_id}/complete`, {
      output_ids: ids,
      finish_reason: "stop",
    });
    const response = await rs.finalResponse();
    assert.deepEqual(response.output.map((i) => i.type), ["reasoning", "message", "function_call"]);
    assert.equal(response.output_text, "Listing now.");
  } finally {
    await gw.close();
  }
});

Deno.test("append: unknown request 404, ids past the vocabulary 400, after completion 409", async () => {
  const gw = await startGateway();
  try {
    assert.equal((await gw.api("POST", "/requests/nope/append", { output_ids: [1] })).status, 404);
    const r = await gw.rollout();
    const res = fetch(`${r.base_url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
    const req = await take(gw, r.id);
    const far = await gw.api("POST", `/requests/${req.request_id}/append`, {
      output_ids: [10 ** 7],
    });
    assert.equal(far.status, 400);
    assert.equal(
      (await gw.api("POST", `/requests/${req.request_id}/append`, { output_ids: [] })).status,
      400,
    );
    const hello = await model.tokenizer.encode("Hello<|im_end|>");
    await gw.api("POST", `/requests/${req.request_id}/complete`, {
      output_ids: hello,
      finish_reason: "stop",
    });
    assert.equal((await res).status, 200);
    await (await res).body?.cancel();
    assert.equal(
      (await gw.api("POST", `/requests/${req.request_id}/append`, { output_ids: [1] })).status,
      409,
    );
  } finally {
    await gw.close();
  }
});
