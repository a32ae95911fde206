import assert from "node:assert/strict";
import { isClosedSocketWrite } from "./closed_socket_write.ts";

/** The error as the client throws it, with a stack through its connection module. */
function strayWrite(path: string): TypeError {
  const e = new TypeError("Cannot read properties of null (reading 'write')");
  e.stack = `${e.name}: ${e.message}\n    at nextWrite (file:///x/node_modules/${path}:255:22)`;
  return e;
}

Deno.test("the postgres client's write to a closed socket is recognised, nothing else", () => {
  assert.ok(isClosedSocketWrite(strayWrite("postgres/src/connection.js")));
  // The same message from anywhere else, or another error from the client, still ends the process.
  assert.ok(!isClosedSocketWrite(strayWrite("hono/dist/index.js")));
  assert.ok(
    !isClosedSocketWrite(new TypeError("Cannot read properties of null (reading 'write')")),
  );
  assert.ok(!isClosedSocketWrite(new RangeError("reading 'write' postgres/src/connection.js")));
});
