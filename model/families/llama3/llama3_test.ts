import assert from "node:assert/strict";
import { splitLlama3ToolCall } from "./tool_calls.ts";
import { Llama3TextRenderer } from "./render.ts";

const id = () => "call_1";

Deno.test("llama-3: one JSON call is the whole answer; other layouts read; text stays text", () => {
  const exact = '{"name": "bash", "parameters": {"command": "echo \\"}\\"", "n": 1.0}}';
  assert.deepEqual(splitLlama3ToolCall(exact, id).toolCalls, [
    { id: "call_1", name: "bash", arguments: '{"command": "echo \\"}\\"", "n": 1.0}' },
  ]);
  // vLLM's llama3_json parser reads `arguments` too; written back as JSON.
  assert.deepEqual(splitLlama3ToolCall('{"arguments":{"a":1},"name":"ls"}', id).toolCalls, [
    { id: "call_1", name: "ls", arguments: '{"a": 1}' },
  ]);
  for (const text of ["Done.", '{"answer": 42}', 'Use {"name": "x"} here']) {
    assert.deepEqual(splitLlama3ToolCall(text, id), { content: text, toolCalls: [], malformed: 0 });
  }
  const broken = '{"name": "bash", "parameters": {"command": }}';
  assert.deepEqual(splitLlama3ToolCall(broken, id), {
    content: broken,
    toolCalls: [],
    malformed: 1,
  });
});

Deno.test("llama-3: several calls in one message are refused, naming the template's rule", () => {
  const text = new Llama3TextRenderer({ dateString: "26 Jul 2024", toolsInUserMessage: true });
  assert.throws(
    () =>
      text.render(
        [{ role: "user", content: "go" }, {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "a", name: "x", arguments: "{}" }, {
            id: "b",
            name: "y",
            arguments: "{}",
          }],
        }],
        [],
        { addGenerationPrompt: false },
      ),
    /llama-3: the model's template takes one tool call per assistant message, got 2/,
  );
});
