import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { answerFromRecord, loadCapture } from "./__fixtures__/load.ts";
import { anthropicAdapter } from "./mod.ts";

Deno.test("adapter identity and request parsing", () => {
  assert.equal(anthropicAdapter.name, "anthropic");
  assert.equal(anthropicAdapter.toolCallIdPrefix, "toolu_");
  const req = anthropicAdapter.parseRequest(loadCapture()[1].body);
  assert.equal(req.protocol, "anthropic");
  assert.equal(req.messages.length, 4);
  assert.deepEqual(anthropicAdapter.errorBody(401, "bad token"), {
    type: "error",
    error: { type: "authentication_error", message: "bad token" },
  });
});

/** An SDK client whose `fetch` answers every request with `response`. */
function sdkAnswering(response: () => Response): Anthropic {
  return new Anthropic({
    apiKey: "test",
    baseURL: "http://gateway.invalid",
    maxRetries: 0,
    fetch: () => Promise.resolve(response()),
  });
}

const params = { model: "claude-sonnet-4-5", max_tokens: 100, messages: [] };

Deno.test("official SDK: the SSE stream accumulates to the non-streaming body", async () => {
  const [record] = loadCapture();
  const answer = answerFromRecord(record);
  const request = anthropicAdapter.parseRequest(record.body);
  const sse = anthropicAdapter.toStreamEvents(answer, request)
    .map((e) => `event: ${e.event}\ndata: ${e.data}\n\n`).join("");
  const client = sdkAnswering(() =>
    new Response(sse, { headers: { "content-type": "text/event-stream" } })
  );
  const streamed = await client.messages.stream(params).finalMessage();
  const body = anthropicAdapter.toResponseBody(answer, request);
  // The SDK adds `parsed_output: null` and `stop_details: undefined` to what it accumulates.
  const { parsed_output: _, ...message } = streamed as typeof streamed & {
    parsed_output?: unknown;
  };
  assert.deepEqual(JSON.parse(JSON.stringify(message)), body);
});

Deno.test("official SDK: non-streaming body and error body", async () => {
  const [, record] = loadCapture();
  const answer = answerFromRecord(record);
  const body = anthropicAdapter.toResponseBody(answer, anthropicAdapter.parseRequest(record.body));
  const client = sdkAnswering(() => Response.json(body));
  const message = await client.messages.create(params);
  assert.equal(message.stop_reason, "end_turn");
  assert.deepEqual(message.content.map((b) => b.type), ["thinking", "text"]);

  const failing = sdkAnswering(() =>
    Response.json(anthropicAdapter.errorBody(429, "slow down"), { status: 429 })
  );
  await assert.rejects(failing.messages.create(params), (e) => {
    assert.ok(e instanceof Anthropic.RateLimitError);
    assert.match(e.message, /slow down/);
    return true;
  });
});
