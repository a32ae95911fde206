import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { tokenizerDoubleDir } from "../../../tests/support/tokenizer_doubles.ts";
import { PolicyModel } from "../../policy_model.ts";
import { splitKimiToolCalls } from "./tool_calls.ts";

// A tokenizer double: the Qwen3 vocabulary plus Kimi's special tokens (no package ships Kimi's).
const DIR = await tokenizerDoubleDir("kimi-k2");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));
const kimi = await PolicyModel.load({ dir: DIR, family: "kimi-k2" });

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  description: "Run ✓",
  parameters: { type: "object", properties: { command: { type: "string" } } },
}];

Deno.test("kimi-k2: renders the format (tool_declare, default system, sections, results)", async () => {
  const messages: Message[] = [
    { role: "user", content: " List files\n" },
    {
      role: "assistant",
      content: "Listing.",
      reasoning_content: "not rendered",
      tool_calls: [{ id: "functions.bash:0", name: "bash", arguments: '{"command": "ls"}' }],
    },
    { role: "tool", content: "a.py", tool_call_id: "functions.bash:0", name: "bash" },
  ];
  assert.equal(
    (await kimi.renderFull(messages, tools)).text,
    "<|im_system|>tool_declare<|im_middle|>" +
      '[{"function":{"description":"Run ✓","name":"bash","parameters":{"properties":{"command":' +
      '{"type":"string"}},"type":"object"}},"type":"function"}]<|im_end|>' +
      "<|im_system|>system<|im_middle|>You are Kimi, an AI assistant created by Moonshot AI." +
      "<|im_end|>\n<|im_user|>user<|im_middle|> List files\n<|im_end|>" +
      "<|im_assistant|>assistant<|im_middle|>Listing.<|tool_calls_section_begin|>" +
      '<|tool_call_begin|>functions.bash:0<|tool_call_argument_begin|>{"command": "ls"}' +
      "<|tool_call_end|><|tool_calls_section_end|><|im_end|>" +
      "<|im_system|>bash<|im_middle|>## Return of functions.bash:0\na.py<|im_end|>" +
      "<|im_assistant|>assistant<|im_middle|>",
  );
  const delta = await kimi.renderDeltaIds([{ role: "tool", content: "x", tool_call_id: "c" }]);
  assert.equal(
    delta.text,
    "<|im_system|>tool<|im_middle|>## Return of c\nx<|im_end|><|im_assistant|>assistant<|im_middle|>",
  );
});

Deno.test("kimi-k2: the policy's call ids are kept; arguments and content verbatim", async () => {
  const message: AssistantMessage = {
    role: "assistant",
    content: "\n Running\n",
    tool_calls: [
      {
        id: "functions.bash:3",
        name: "bash",
        arguments: '{"command": "a<|tool_call_end|><|tool_calls_section_end|>b", "n": 1.0}',
      },
      { id: "functions.mcp.fs.read:4", name: "mcp.fs.read", arguments: "{}" },
    ],
  };
  const sampled = await kimi.renderAnswerIds(message);
  assert.equal(sampled.at(-1), kimi.endOfTurnId);
  const out = await kimi.parse(sampled, () => "unused", tools);
  assert.deepEqual(out.message, message);
  assert.equal(out.malformedToolCalls, 0);
  assert.equal(out.reasoningTokens, 0);
});

Deno.test("kimi-k2 tool calls: a section that does not parse stays text, counted", () => {
  const section = (call: string) =>
    `Try.<|tool_calls_section_begin|>${call}<|tool_calls_section_end|>`;
  const ok =
    '<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|>';
  assert.equal(splitKimiToolCalls(section(ok)).toolCalls.length, 1);
  for (
    const bad of [
      '<|tool_call_begin|>f<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|>', // no index
      "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{oops}<|tool_call_end|>",
      "", // an empty section
    ]
  ) {
    const split = splitKimiToolCalls(section(bad));
    assert.deepEqual([split.content, split.toolCalls, split.malformed], [section(bad), [], 1]);
  }
  assert.equal(splitKimiToolCalls("x <|tool_call_begin|> y").malformed, 1);
});

Deno.test("kimi-k2: streamed text is a prefix of the final parse and stops at the section", async () => {
  const message: AssistantMessage = {
    role: "assistant",
    content: "\nWorking 👩‍💻 ",
    tool_calls: [{ id: "functions.bash:0", name: "bash", arguments: '{"command": "ls"}' }],
  };
  const output = await kimi.renderAnswerIds(message);
  const stream = kimi.streamingParser();
  let text = "";
  for (const x of output) {
    text += (await stream.push([x])).text;
    assert.ok(message.content.startsWith(text));
  }
  assert.equal(text, message.content);
});
