import assert from "node:assert/strict";
import { errorBody } from "./errors.ts";

Deno.test("error bodies follow OpenAI's type per status", () => {
  const cases: [number, string, string | null][] = [
    [400, "invalid_request_error", null],
    [404, "invalid_request_error", null],
    [401, "authentication_error", "invalid_api_key"],
    [403, "permission_error", null],
    [429, "rate_limit_error", "rate_limit_exceeded"],
    [500, "server_error", "server_error"],
    [503, "server_error", "server_error"],
  ];
  for (const [status, type, code] of cases) {
    assert.deepEqual(errorBody(status, "nope"), {
      error: { message: "nope", type, param: null, code },
    }, `status ${status}`);
  }
});
