import assert from "node:assert/strict";
import { errorBody, errorType } from "./errors.ts";

Deno.test("error type by HTTP status", () => {
  const table: [number, string][] = [
    [400, "invalid_request_error"],
    [401, "authentication_error"],
    [403, "permission_error"],
    [404, "not_found_error"],
    [409, "invalid_request_error"],
    [413, "request_too_large"],
    [422, "invalid_request_error"],
    [429, "rate_limit_error"],
    [500, "api_error"],
    [502, "api_error"],
    [503, "overloaded_error"],
    [504, "api_error"],
    [529, "overloaded_error"],
  ];
  for (const [status, type] of table) assert.equal(errorType(status), type, `status ${status}`);
});

Deno.test("errorBody shape", () => {
  assert.deepEqual(errorBody(404, "no such rollout"), {
    type: "error",
    error: { type: "not_found_error", message: "no such rollout" },
  });
});
