import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { tokenizerDoubleDir } from "../../../tests/support/tokenizer_doubles.ts";
import { streamAgainstParse } from "../../../tests/support/streamed_prefix.ts";
import { loadModelFiles } from "../../model_files.ts";
import { PolicyModel } from "../../policy_model.ts";
import { detectFamily } from "../mod.ts";
import { templateIdentity } from "./mod.ts";
import { splitMiniMaxToolCalls } from "./tool_calls.ts";

// A tokenizer double: the Qwen3 vocabulary plus MiniMax's special tokens (no package ships it).
const DIR = await tokenizerDoubleDir("minimax-m2");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));
const minimax = await PolicyModel.load({ dir: DIR });

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  description: "Run ✓",
  parameters: {
    type: "object",
    properties: { command: { type: "string" }, timeout: { type: "number" } },
  },
}];

Deno.test("minimax-m2: detected from the template; its identity read from it", async () => {
  assert.equal(minimax.family, "minimax-m2");
  assert.equal(detectFamily(await loadModelFiles(DIR)).name, "minimax-m2");
  assert.equal(
    templateIdentity('{%- set model_identity = "You are MiniMax-M2.7." -%}'),
    "You are MiniMax-M2.7.",
  );
  assert.equal(templateIdentity("no identity"), null);
  await assert.rejects(
    PolicyModel.load({ dir: DIR, templateKwargs: { model_identity: 3 } }),
    /minimax-m2: template variable model_identity is 3; expected text/,
  );
});

Deno.test("minimax-m2: renders the format (system identity, tools, ai role, calls, responses)", async () => {
  const messages: Message[] = [
    { role: "user", content: "List" },
    {
      role: "assistant",
      content: "Listing.",
      reasoning_content: "ls it",
      tool_calls: [
        { id: "a", name: "bash", arguments: '{"command": "ls", "timeout": 1.0}' },
        { id: "b", name: "bash", arguments: "{}" },
      ],
    },
    { role: "tool", content: "a.py", tool_call_id: "a" },
    { role: "tool", content: "", tool_call_id: "b" },
  ];
  const text = (await minimax.renderFull(messages, tools)).text;
  assert.ok(text.startsWith(
    "]~!b[]~b]system\nYou are a helpful assistant. Your name is MiniMax-M2.5 and is built by " +
      'MiniMax.\n\n# Tools\nYou may call one or more tools to assist with the user query.\nHere are the tools available in JSONSchema format:\n\n<tools>\n<tool>{"name": "bash", "description": "Run ✓", ',
  ));
  assert.ok(text.endsWith(
    "</minimax:tool_call>[e~[\n]~b]user\nList[e~[\n" +
      "]~b]ai\n<think>\nls it\n</think>\n\nListing.\n<minimax:tool_call>\n" +
      '<invoke name="bash">\n<parameter name="command">ls</parameter>\n' +
      '<parameter name="timeout">1.0</parameter>\n</invoke>\n<invoke name="bash">\n</invoke>\n' +
      "</minimax:tool_call>[e~[\n]~b]tool\n<response>a.py</response>\n<response></response>[e~[\n" +
      "]~b]ai\n<think>\n",
  ));
  // After a new user message the earlier reasoning leaves the prompt.
  const later = await minimax.renderFull([...messages, { role: "user", content: "ok" }], []);
  assert.ok(!later.text.includes("ls it"));
  // The delta after `[e~[` starts with the newline history writes after it.
  const delta = await minimax.renderDeltaIds([{ role: "tool", content: "x", tool_call_id: "c" }]);
  assert.equal(delta.text, "\n]~b]tool\n<response>x</response>[e~[\n]~b]ai\n<think>\n");
});

Deno.test("minimax-m2: answers round-trip; values holding markup; typed by schema", async () => {
  const message: AssistantMessage = {
    role: "assistant",
    content: "Running\n",
    reasoning_content: "think ✓",
    tool_calls: [
      {
        id: "x",
        name: "bash",
        arguments:
          '{"command": "a</parameter>\\n</invoke>\\n</minimax:tool_call>b", "timeout": 2.5}',
      },
      { id: "y", name: "bash", arguments: '{"command": "\\n padded \\n"}' },
    ],
  };
  const sampled = await minimax.renderAnswerIds(message);
  assert.equal(sampled.at(-1), minimax.endOfTurnId);
  let n = 0;
  const out = await minimax.parse(sampled, () => ["x", "y"][n++], tools);
  assert.deepEqual(out.message, message);
  assert.equal(out.malformedToolCalls, 0);
  const { sent, final } = await streamAgainstParse(minimax, sampled, {
    chunk: () => 1,
    tools,
    label: "one id at a time",
  });
  assert.equal(sent.reasoning, final.reasoning_content);
  assert.equal(sent.text, "Running");
});

Deno.test("minimax-m2 tool calls: what does not parse stays text, counted", () => {
  const id = () => "c";
  const ok = '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1</parameter>\n' +
    "</invoke>\n</minimax:tool_call>";
  assert.equal(splitMiniMaxToolCalls("x\n" + ok, [], id).content, "x");
  assert.equal(splitMiniMaxToolCalls(ok + "\n" + ok, [], id).toolCalls.length, 2);
  for (
    const bad of [
      '<minimax:tool_call>\n<invoke name="f">\n<parameter name="a">1\n</invoke>\n</minimax:tool_call>',
      "<minimax:tool_call>\n</minimax:tool_call>", // an empty block
      '<minimax:tool_call>\n<invoke name="f">\n</minimax:tool_call>', // an invoke never closed
      ok + " trailing text",
    ]
  ) {
    assert.deepEqual(splitMiniMaxToolCalls(bad, [], id), {
      content: bad,
      toolCalls: [],
      malformed: 1,
    });
  }
  assert.equal(splitMiniMaxToolCalls('a <invoke name="f"> b', [], id).malformed, 1);
});
