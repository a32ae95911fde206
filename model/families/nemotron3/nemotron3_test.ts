import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { PolicyModel } from "../../policy_model.ts";
import { streamAgainstParse } from "../../../tests/support/streamed_prefix.ts";
import { nemotronToolDeclarations } from "./tool_declarations.ts";

// Nemotron 3's markers are all in the bundled Qwen3 vocabulary.
const model = await PolicyModel.load({ family: "nemotron-3" });

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  description: " Run a command ",
  parameters: {
    type: "object",
    properties: {
      command: { type: "string", description: "what to run\n" },
      mode: { type: ["string", "null"], enum: ["fast", "über"], default: null },
      opts: { type: "object", additionalProperties: false },
    },
    required: ["command"],
    $schema: "x",
  },
}];

Deno.test("nemotron-3: tool declarations as the template writes them (XML, tojson, str())", () => {
  assert.equal(
    nemotronToolDeclarations(tools),
    "<function>\n<name>bash</name>\n<description>Run a command</description>\n<parameters>\n" +
      "<parameter>\n<name>command</name>\n<type>string</type>\n<description>what to run" +
      "</description>\n</parameter>\n<parameter>\n<name>mode</name>\n<type>['string', 'null']" +
      '</type>\n<enum>["fast", "über"]</enum>\n<default>None</default>\n</parameter>\n' +
      "<parameter>\n<name>opts</name>\n<type>object</type>\n<additionalProperties>False" +
      '</additionalProperties>\n</parameter>\n<$schema>x</$schema>\n<required>["command"]' +
      "</required>\n</parameters>\n</function>",
  );
});

Deno.test("nemotron-3: a system turn always, a think block on every assistant turn", async () => {
  const messages: Message[] = [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: "Listing.",
      reasoning_content: "Need ls.",
      tool_calls: [{ id: "a", name: "bash", arguments: '{"command": "ls", "n": 1.0, "b": true}' }],
    },
    { role: "tool", content: "a.py", tool_call_id: "a" },
    { role: "tool", content: "ok", tool_call_id: "a" },
    { role: "assistant", content: "Done. " },
  ];
  const { text } = await model.renderFull(messages, [], false);
  assert.equal(
    text,
    "<|im_start|>system\n<|im_end|>\n<|im_start|>user\ngo<|im_end|>\n<|im_start|>assistant\n" +
      "<think>\nNeed ls.\n</think>\nListing.\n<tool_call>\n<function=bash>\n" +
      "<parameter=command>\nls\n</parameter>\n<parameter=n>\n1.0\n</parameter>\n" +
      "<parameter=b>\nTrue\n</parameter>\n</function>\n</tool_call>\n<|im_end|>\n" +
      "<|im_start|>user\n<tool_response>\na.py\n</tool_response>\n<tool_response>\nok\n" +
      "</tool_response>\n<|im_end|>\n<|im_start|>assistant\n<think></think>Done.<|im_end|>\n",
  );
  // A new user message truncates earlier reasoning (the template's default).
  const later = await model.renderFull([...messages, { role: "user", content: "more" }], []);
  assert.ok(later.text.includes("assistant\n<think></think>Listing.\n<tool_call>"), later.text);
  assert.ok(later.text.endsWith("<|im_start|>assistant\n<think>\n"));
  const kept = await PolicyModel.load({
    family: "nemotron-3",
    templateKwargs: { truncate_history_thinking: false, enable_thinking: false },
  });
  const keptText = (await kept.renderFull([...messages, { role: "user", content: "m" }], [])).text;
  assert.ok(keptText.includes("<think>\nNeed ls.\n</think>\nListing."));
  assert.ok(keptText.endsWith("<|im_start|>assistant\n<think></think>"));
  assert.equal(kept.format.quirks.dropsOldReasoning, false);
  // With tools and a system message: the message, a blank line, the tools.
  const withTools = await model.renderFull([{ role: "system", content: "S" }, messages[0]], tools);
  assert.ok(withTools.text.startsWith("<|im_start|>system\nS\n\n# Tools\n\n"));
});

Deno.test("nemotron-3: answers round-trip; without reasoning the policy closes the empty block", async () => {
  const message: AssistantMessage = {
    role: "assistant",
    content: "Running ✓.",
    reasoning_content: "Need </parameter> ls.",
    tool_calls: [
      { id: "call_0", name: "bash", arguments: '{"command": "echo </parameter> x"}' },
      { id: "call_1", name: "bash", arguments: '{"command": "pwd"}' },
    ],
  };
  let n = 0;
  for (
    const m of [message, { role: "assistant" as const, content: "Hi.", reasoning_content: "" }]
  ) {
    const ids = await model.renderAnswerIds(m);
    assert.ok(ids.length > 0);
    const out = await model.parse(ids, () => `call_${n++ % 2}`, tools);
    assert.deepEqual(out.message, m);
    assert.equal(out.malformedToolCalls, 0);
    const { sent } = await streamAgainstParse(model, ids, { tools });
    assert.equal(sent.reasoning, m.reasoning_content);
  }
  assert.equal(
    await model.decode(
      await model.renderAnswerIds({ role: "assistant", content: "Hi.", reasoning_content: "" }),
    ),
    "\n</think>\nHi.<|im_end|>",
  );
});
