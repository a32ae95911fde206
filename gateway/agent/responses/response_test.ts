import assert from "node:assert/strict";
import type { AssistantMessage, TurnAnswer } from "../../../canonical/mod.ts";
import { toResponseObject } from "./response.ts";
import { toCanonicalRequest } from "./to_canonical.ts";

const usage = { input_tokens: 120, output_tokens: 30, reasoning_tokens: 12, cached_tokens: 100 };

function answer(message: Partial<AssistantMessage>, extra: Partial<TurnAnswer> = {}): TurnAnswer {
  return {
    id: "t42",
    model: "policy-model-v1",
    message: { role: "assistant", content: "", ...message },
    stopReason: "stop",
    usage,
    created: 1795346110,
    ...extra,
  };
}

const full = answer({
  content: "Running it.",
  reasoning_content: "I should run a command.",
  tool_calls: [
    { id: "call_abc", name: "exec_command", arguments: '{"cmd": "ls"}' },
    {
      id: "call_def",
      name: "apply_patch",
      arguments: JSON.stringify({ input: "*** Begin Patch" }),
      kind: "custom",
    },
  ],
}, { stopReason: "tool_calls" });

Deno.test("response object: items in order, ids derived from the turn and call ids", () => {
  assert.deepEqual(toResponseObject(full), {
    id: "resp_t42",
    object: "response",
    created_at: 1795346110,
    status: "completed",
    model: "policy-model-v1",
    output: [
      {
        type: "reasoning",
        id: "rs_t42",
        summary: [{ type: "summary_text", text: "I should run a command." }],
        encrypted_content: "rollgate:t42",
      },
      {
        type: "message",
        id: "msg_t42",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Running it.", annotations: [] }],
      },
      {
        type: "function_call",
        id: "fc_abc",
        call_id: "call_abc",
        name: "exec_command",
        arguments: '{"cmd": "ls"}',
        status: "completed",
      },
      {
        type: "custom_tool_call",
        id: "ctc_def",
        call_id: "call_def",
        name: "apply_patch",
        input: "*** Begin Patch",
        status: "completed",
      },
    ],
    usage: {
      input_tokens: 120,
      input_tokens_details: { cached_tokens: 100 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 150,
    },
    incomplete_details: null,
    error: null,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
  });
});

Deno.test("empty reasoning and content produce no items", () => {
  const res = toResponseObject(answer({ content: "", reasoning_content: "" }));
  assert.deepEqual(res.output, []);
  const textOnly = toResponseObject(answer({ content: "Hi" }));
  assert.deepEqual(textOnly.output.map((i) => i.type), ["message"]);
});

Deno.test("a length stop is incomplete with reason max_output_tokens", () => {
  const res = toResponseObject(answer({ content: "cut of" }, { stopReason: "length" }));
  assert.equal(res.status, "incomplete");
  assert.deepEqual(res.incomplete_details, { reason: "max_output_tokens" });
  assert.equal(toResponseObject(full).incomplete_details, null);
});

Deno.test("custom tool call whose arguments are not the input wrapper passes them through", () => {
  const res = toResponseObject(answer({
    tool_calls: [{ id: "call_x", name: "apply_patch", arguments: "raw text", kind: "custom" }],
  }));
  assert.equal(res.output[0].type === "custom_tool_call" && res.output[0].input, "raw text");
});

Deno.test("output items echoed back by the client convert to the same assistant message", () => {
  // Codex echoes reasoning items with an added `content: null`.
  const echoed = toResponseObject(full).output.map((item) =>
    item.type === "reasoning" ? { ...item, content: null } : item
  );
  const req = toCanonicalRequest({
    model: "m",
    input: [
      { role: "user", content: "go" },
      ...echoed,
      { type: "function_call_output", call_id: "call_abc", output: "ok" },
    ],
  });
  assert.deepEqual(req.messages, [
    { role: "user", content: "go" },
    full.message,
    { role: "tool", tool_call_id: "call_abc", content: "ok" },
  ]);
});
