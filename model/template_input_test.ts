import assert from "node:assert/strict";
import { toCanonicalRequest as chatToCanonical } from "../gateway/agent/openai_chat/mod.ts";
import { toCanonicalRequest as responsesToCanonical } from "../gateway/agent/responses/mod.ts";
import type { Message } from "../canonical/mod.ts";
import { PolicyModel } from "./policy_model.ts";
import { SYSTEM_JOINER, toTemplateMessages, toTemplateTools } from "./template_input.ts";

Deno.test("toTemplateMessages: several leading system messages become one, joined with \\n\\n", () => {
  assert.equal(SYSTEM_JOINER, "\n\n");
  const out = toTemplateMessages([
    { role: "system", content: "A" },
    { role: "system", content: "B\n" },
    { role: "system", content: "" },
    { role: "user", content: "hi" },
    { role: "system", content: "mid" },
  ]);
  assert.deepEqual(out, [
    { role: "system", content: "A\n\nB\n\n\n" },
    { role: "user", content: "hi" },
    // A later system message stays in place (the template renders it as a system turn).
    { role: "system", content: "mid" },
  ]);
  // One leading system message is kept as is; none gives none.
  assert.deepEqual(toTemplateMessages([{ role: "system", content: "S" }]), [
    { role: "system", content: "S" },
  ]);
  assert.deepEqual(toTemplateMessages([{ role: "user", content: "u" }]), [
    { role: "user", content: "u" },
  ]);
});

Deno.test("toTemplateMessages: no folding for a delta", () => {
  const messages: Message[] = [{ role: "system", content: "A" }, { role: "system", content: "B" }];
  assert.deepEqual(toTemplateMessages(messages, false), messages);
});

Deno.test("toTemplateMessages: developer (mapped to system by the protocols) folds with system", () => {
  const chat = chatToCanonical({
    model: "m",
    messages: [
      { role: "developer", content: "You are pi." },
      { role: "system", content: [{ type: "text", text: "Be brief." }] },
      { role: "user", content: "hi" },
    ],
  });
  assert.deepEqual(toTemplateMessages(chat.messages), [
    { role: "system", content: "You are pi.\n\nBe brief." },
    { role: "user", content: "hi" },
  ]);
  const responses = responsesToCanonical({
    model: "m",
    instructions: "You are Codex.",
    input: [
      { type: "message", role: "developer", content: "Sandbox: workspace-write." },
      { type: "message", role: "user", content: "fix it" },
    ],
  });
  assert.deepEqual(toTemplateMessages(responses.messages), [
    { role: "system", content: "You are Codex.\n\nSandbox: workspace-write." },
    { role: "user", content: "fix it" },
  ]);
});

Deno.test('toTemplateMessages: content null becomes ""', () => {
  // The wire allows `content: null` (OpenAI assistant tool-call turns); the types do not.
  const messages = [
    { role: "system", content: null },
    { role: "user", content: null },
    { role: "assistant", content: null, tool_calls: [{ id: "c", name: "f", arguments: "{}" }] },
    { role: "tool", content: null, tool_call_id: "c" },
  ] as unknown as Message[];
  const out = toTemplateMessages(messages);
  assert.deepEqual(out.map((m) => m.content), ["", "", "", ""]);
});

Deno.test("toTemplateMessages: assistant and tool shapes", () => {
  const out = toTemplateMessages([
    {
      role: "assistant",
      content: "x",
      reasoning_content: "r",
      tool_calls: [{ id: "c1", name: "f", arguments: '{"a":1}', kind: "function" }],
    },
    { role: "assistant", content: "y", tool_calls: [] },
    { role: "tool", content: "out", tool_call_id: "c1", name: "f" },
    { role: "tool", content: "out2", tool_call_id: "c2" },
  ]);
  assert.deepEqual(out, [
    {
      role: "assistant",
      content: "x",
      reasoning_content: "r",
      // Arguments stay the verbatim string (the template prints strings as they are).
      tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
    },
    // No reasoning key when there was none; no empty tool_calls.
    { role: "assistant", content: "y" },
    { role: "tool", content: "out", tool_call_id: "c1", name: "f" },
    { role: "tool", content: "out2", tool_call_id: "c2" },
  ]);
});

Deno.test("toTemplateTools: OpenAI function shape, default parameters", () => {
  assert.deepEqual(
    toTemplateTools([
      { name: "a", kind: "function", description: "d", parameters: { type: "object" } },
      { name: "b", kind: "custom" },
    ]),
    [
      {
        type: "function",
        function: { name: "a", description: "d", parameters: { type: "object" } },
      },
      { type: "function", function: { name: "b", parameters: { type: "object", properties: {} } } },
    ],
  );
});

Deno.test("renderFull: folded system prompt renders once, ahead of the tools", async () => {
  const model = await PolicyModel.load();
  const { text } = await model.renderFull(
    [
      { role: "system", content: "One." },
      { role: "system", content: "Two." },
      { role: "user", content: "hi" },
    ],
    [{ name: "f", kind: "function", parameters: { type: "object" } }],
  );
  assert.ok(text.startsWith("<|im_start|>system\nOne.\n\nTwo.\n\n# Tools\n"), text);
  assert.equal(text.split("<|im_start|>system").length, 2);
});
