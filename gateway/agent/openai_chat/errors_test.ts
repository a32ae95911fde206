import OpenAI from "openai";
import assert from "node:assert/strict";
import { errorBody } from "./errors.ts";
import { openaiChatAdapter } from "./mod.ts";

Deno.test("errorBody: OpenAI type and code per status", () => {
  const cases: [number, string, string | null][] = [
    [400, "invalid_request_error", null],
    [401, "authentication_error", "invalid_api_key"],
    [403, "permission_error", null],
    [404, "invalid_request_error", "not_found"],
    [409, "invalid_request_error", "conflict"],
    [413, "invalid_request_error", "request_too_large"],
    [422, "invalid_request_error", null],
    [429, "rate_limit_error", "rate_limit_exceeded"],
    [500, "server_error", null],
    [503, "server_error", null],
  ];
  for (const [status, type, code] of cases) {
    assert.deepEqual(errorBody(status, "msg"), {
      error: { message: "msg", type, param: null, code },
    }, `status ${status}`);
  }
});

Deno.test("the OpenAI SDK surfaces the error message and type", async () => {
  const client = new OpenAI({
    apiKey: "test",
    baseURL: "http://gateway.invalid/v1",
    maxRetries: 0,
    fetch: () =>
      Promise.resolve(Response.json(openaiChatAdapter.errorBody(400, "messages: bad"), {
        status: 400,
      })),
  });
  await assert.rejects(
    client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] }),
    (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, `expected BadRequestError, got ${err}`);
      assert.match(err.message, /messages: bad/);
      assert.equal(err.type, "invalid_request_error");
      return true;
    },
  );
});

Deno.test("adapter identity", () => {
  assert.equal(openaiChatAdapter.name, "chat");
  assert.equal(openaiChatAdapter.toolCallIdPrefix, "call_");
});
