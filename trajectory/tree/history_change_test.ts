import assert from "node:assert/strict";
import type { AssistantMessage } from "../../canonical/mod.ts";
import { messageChange } from "./history_change.ts";

const call = (args: string, id = "c1"): AssistantMessage => ({
  role: "assistant",
  content: "",
  tool_calls: [{ id, name: "Bash", arguments: args }],
});

Deno.test("messageChange: a re-encoded tool argument, decoded on both sides", () => {
  assert.deepEqual(
    messageChange(
      4,
      call('{"command": "echo \\"caf\\\\u00e9\\"", "timeout": 5}'),
      call('{"command":"echo \\"café\\"","timeout":5}'),
    ),
    {
      message_index: 4,
      role: "assistant",
      path: "tool_calls[0].arguments.command",
      recorded: 'echo "caf\\u00e9"',
      received: 'echo "café"',
    },
  );
});

Deno.test("messageChange: nested arguments, ids, content and roles", () => {
  assert.equal(
    messageChange(1, call('{"a": {"b": [1, 2]}}'), call('{"a": {"b": [1, 3]}}')).path,
    "tool_calls[0].arguments.a.b[1]",
  );
  assert.equal(messageChange(1, call("{}"), call("{}", "c2")).path, "tool_calls[0].id");
  assert.equal(
    messageChange(1, call("not json"), call("not json!")).path,
    "tool_calls[0].arguments",
  );
  const edited = messageChange(
    2,
    { role: "user", content: "list the files" },
    { role: "user", content: "list all files" },
  );
  assert.deepEqual([edited.path, edited.recorded, edited.received], [
    "content",
    "list the files",
    "list all files",
  ]);
  assert.equal(
    messageChange(2, { role: "user", content: "x" }, {
      role: "tool",
      content: "x",
      tool_call_id: "c",
    })
      .path,
    "role",
  );
});

Deno.test("messageChange: a long value is cut around the first difference", () => {
  const before = "a".repeat(100) + "X" + "b".repeat(100);
  const after = "a".repeat(100) + "Y" + "b".repeat(100);
  const c = messageChange(0, { role: "user", content: before }, { role: "user", content: after });
  assert.equal(c.recorded, "…" + "a".repeat(40) + "X" + "b".repeat(39) + "…");
  assert.equal(c.received, "…" + "a".repeat(40) + "Y" + "b".repeat(39) + "…");
});

Deno.test("messageChange: a message the client added or dropped", () => {
  assert.deepEqual(messageChange(3, undefined, { role: "user", content: "more" }), {
    message_index: 3,
    role: "user",
    path: "added",
    recorded: null,
    received: "more",
  });
  assert.equal(messageChange(3, { role: "user", content: "gone" }, undefined).path, "removed");
});
