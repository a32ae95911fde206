import assert from "node:assert/strict";
import { errorBody, errorStatus } from "./errors.ts";

Deno.test("errors: Google's body, with the google.rpc status the API pairs with the HTTP status", () => {
  assert.deepEqual(errorBody(400, "contents: required"), {
    error: { code: 400, message: "contents: required", status: "INVALID_ARGUMENT" },
  });
  const pairs: [number, string][] = [
    [401, "UNAUTHENTICATED"],
    [403, "PERMISSION_DENIED"],
    [404, "NOT_FOUND"],
    [405, "INVALID_ARGUMENT"],
    [409, "ABORTED"],
    [413, "INVALID_ARGUMENT"],
    [429, "RESOURCE_EXHAUSTED"],
    [500, "INTERNAL"],
    [502, "INTERNAL"],
    [503, "UNAVAILABLE"],
    [504, "DEADLINE_EXCEEDED"],
  ];
  for (const [status, name] of pairs) assert.equal(errorStatus(status), name, String(status));
});
