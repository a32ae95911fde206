import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { streamAgainstParse } from "../../../tests/support/streamed_prefix.ts";
import { tokenizerDoubleDir } from "../../../tests/support/tokenizer_doubles.ts";
import { PolicyModel } from "../../policy_model.ts";
import { splitGlmToolCalls } from "./tool_calls.ts";

// A tokenizer double: the Qwen3 vocabulary plus GLM's special tokens (no package ships GLM's).
const DIR = await tokenizerDoubleDir("glm-5");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));
const glm45 = await PolicyModel.load({ dir: DIR, family: "glm-4.5" });
const glm5 = await PolicyModel.load({ dir: DIR, family: "glm-5" });
const id = (m: PolicyModel, token: string) => m.idOf(token)!;

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  parameters: {
    type: "object",
    properties: {
      command: { type: "string" },
      timeout: { type: "number" },
      bg: { type: "boolean" },
      env: { type: "object" },
    },
  },
}];

const conversation: Message[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "List files" },
  {
    role: "assistant",
    content: " Listing. ",
    reasoning_content: "\nI will run ls.\n",
    tool_calls: [
      { id: "a", name: "bash", arguments: '{"command": "ls", "timeout": 1.0, "bg": false}' },
      { id: "b", name: "bash", arguments: '{"env": {"A": [1, 2.50]}}' },
    ],
  },
  { role: "tool", content: "a.py", tool_call_id: "a" },
  { role: "tool", content: "ok", tool_call_id: "b" },
];

async function ids(m: PolicyModel, ...parts: (string | number)[]): Promise<number[]> {
  const out: number[] = [];
  for (const p of parts) out.push(...(typeof p === "number" ? [p] : await m.tokenizer.encode(p)));
  return out;
}

async function parse(m: PolicyModel, output: number[]) {
  let n = 0;
  return await m.parse(output, () => `call_${n++}`, tools);
}

Deno.test("glm-4.5: renders the format (tools, newline layout, calls, observation, prompt)", async () => {
  const { text } = await glm45.renderFull(conversation, tools);
  assert.ok(text.startsWith("[gMASK]<sop><|system|>\n# Tools\n\nYou may call one or more"));
  assert.ok(text.includes('<tools>\n{"type": "function", "function": {"name": "bash", '));
  assert.ok(
    text.endsWith(
      "</tool_call><|system|>\nBe brief.<|user|>\nList files<|assistant|>\n<think>I will run ls." +
        "</think>\nListing.\n<tool_call>bash\n<arg_key>command</arg_key>\n<arg_value>ls</arg_value>\n" +
        "<arg_key>timeout</arg_key>\n<arg_value>1.0</arg_value>\n<arg_key>bg</arg_key>\n" +
        "<arg_value>false</arg_value>\n</tool_call>\n<tool_call>bash\n<arg_key>env</arg_key>\n" +
        '<arg_value>{"A": [1, 2.5]}</arg_value>\n</tool_call><|observation|>\n<tool_response>\n' +
        "a.py\n</tool_response>\n<tool_response>\nok\n</tool_response><|assistant|>",
    ),
    text,
  );
  const off = await PolicyModel.load({
    dir: DIR,
    family: "glm-4.5",
    templateKwargs: { enable_thinking: false },
  });
  assert.equal(
    (await off.renderFull([{ role: "user", content: "hi" }], [])).text,
    "[gMASK]<sop><|user|>\nhi/nothink<|assistant|>\n<think></think>",
  );
  assert.equal(off.format.quirks.promptOpensReasoning, false);
});

Deno.test("glm-5: renders the compact layout; reasoning kept with clear_thinking=false", async () => {
  const { text } = await glm5.renderFull(conversation, tools);
  assert.ok(
    text.endsWith(
      "<|system|>Be brief.<|user|>List files<|assistant|><think>I will run ls.</think>Listing." +
        "<tool_call>bash<arg_key>command</arg_key><arg_value>ls</arg_value><arg_key>timeout" +
        "</arg_key><arg_value>1.0</arg_value><arg_key>bg</arg_key><arg_value>false</arg_value>" +
        '</tool_call><tool_call>bash<arg_key>env</arg_key><arg_value>{"A": [1, 2.5]}' +
        "</arg_value></tool_call><|observation|><tool_response>a.py</tool_response>" +
        "<tool_response>ok</tool_response><|assistant|><think>",
    ),
    text,
  );
  const later: Message[] = [...conversation, { role: "assistant", content: "Done." }, {
    role: "user",
    content: "thanks",
  }];
  assert.ok((await glm5.renderFull(later, tools)).text.includes("<|assistant|></think>Listing."));
  const keep = await PolicyModel.load({
    dir: DIR,
    family: "glm-5",
    templateKwargs: { clear_thinking: false },
  });
  assert.ok(
    (await keep.renderFull(later, tools)).text.includes("<think>I will run ls.</think>Listing."),
  );
  assert.equal(keep.format.quirks.dropsOldReasoning, false);
  assert.equal(glm5.format.quirks.promptOpensReasoning, true);
});

Deno.test("glm: the delta starts with the next marker, shared with a sampled stop marker", async () => {
  for (const m of [glm45, glm5]) {
    const delta = await m.renderDeltaIds([{ role: "tool", content: "x", tool_call_id: "a" }]);
    const observation = id(m, "<|observation|>"), user = id(m, "<|user|>");
    assert.equal(delta.ids[0], observation);
    assert.deepEqual(await m.joinTurn([5, observation], delta.ids), {
      bridgeIds: [],
      deltaIds: delta.ids.slice(1),
    });
    // Stopped on <|user|> but the next message is a tool result: both markers stay.
    assert.deepEqual(await m.joinTurn([5, user], delta.ids), {
      bridgeIds: [],
      deltaIds: delta.ids,
    });
    // Cut short: nothing bridged, the delta's marker closes the turn.
    assert.deepEqual(await m.joinTurn([5], delta.ids), { bridgeIds: [], deltaIds: delta.ids });
    assert.deepEqual(m.stopTokenIds, [id(m, "<|endoftext|>"), user, observation]);
  }
});

Deno.test("glm: answers round-trip through the renderer, markup inside values included", async () => {
  const message: AssistantMessage = {
    role: "assistant",
    content: "Running ✓.",
    reasoning_content: "Need ls.",
    tool_calls: [
      {
        id: "call_0",
        name: "bash",
        arguments: '{"command": "echo </arg_value></tool_call> done", "bg": true, "timeout": 2.5}',
      },
      { id: "call_1", name: "bash", arguments: '{"command": "<arg_key>k</arg_key><arg_value>"}' },
      { id: "call_2", name: "bash", arguments: '{"env": {"ключ": [null, 1.5, {"d": true}]}}' },
    ],
  };
  for (const m of [glm45, glm5]) {
    const sampled = await m.renderAnswerIds(message);
    assert.equal(sampled.at(-1), id(m, "<|observation|>"));
    const out = await parse(m, sampled);
    assert.deepEqual(out.message, message, m.family);
    assert.equal(out.malformedToolCalls, 0);
    assert.equal(out.reasoningTokens, sampled.indexOf(id(m, "</think>")) + 1);
  }
  // A final answer ends on <|user|>.
  const final = await glm5.renderAnswerIds({ role: "assistant", content: "Hi." });
  assert.deepEqual(final, await ids(glm5, id(glm5, "</think>"), "Hi.", id(glm5, "<|user|>")));
});

Deno.test("glm: a malformed call stays text and is counted; unclosed reasoning ends at a call", async () => {
  const bad = "<tool_call>bash<arg_key>command</arg_key>ls</tool_call>";
  const out = await parse(
    glm5,
    await ids(glm5, "R", id(glm5, "</think>"), "Trying." + bad, id(glm5, "<|observation|>")),
  );
  assert.equal(out.malformedToolCalls, 1);
  assert.equal(out.message.tool_calls, undefined);
  assert.equal(out.message.content, "Trying." + bad);
  // The policy calls a tool without closing its reasoning (GLM-5: the prompt opened it).
  const call = "<tool_call>bash<arg_key>command</arg_key><arg_value>ls</arg_value></tool_call>";
  const unclosed = await parse(glm5, await ids(glm5, "Plan.", call));
  assert.equal(unclosed.message.reasoning_content, "Plan.");
  assert.deepEqual(unclosed.message.tool_calls, [{
    id: "call_0",
    name: "bash",
    arguments: '{"command": "ls"}',
  }]);
  // Cut off while reasoning.
  assert.deepEqual((await parse(glm5, await ids(glm5, "Still thinking"))).message, {
    role: "assistant",
    content: "",
    reasoning_content: "Still thinking",
  });
});

Deno.test("glm tool calls: values verbatim, ambiguity resolved by what follows, blocks alone", () => {
  const split = (text: string) => splitGlmToolCalls(text, tools, () => "id");
  // A value ending in the closing marker's text, then more arguments.
  assert.deepEqual(
    split(
      "<tool_call>bash\n<arg_key>command</arg_key>\n<arg_value> a </arg_value></arg_value>\n" +
        "<arg_key>bg</arg_key>\n<arg_value>true</arg_value>\n</tool_call>",
    ).toolCalls,
    [{ id: "id", name: "bash", arguments: '{"command": " a </arg_value>", "bg": true}' }],
  );
  // The second block is broken: the first still fires, the second stays text, counted.
  const two = split(
    "<tool_call>bash<arg_key>command</arg_key><arg_value>ls</arg_value></tool_call>" +
      "<tool_call><arg_value>x</arg_value></tool_call>",
  );
  assert.equal(two.toolCalls.length, 1);
  assert.equal(two.malformed, 1);
  assert.equal(two.content, "<tool_call><arg_value>x</arg_value></tool_call>");
  // A stray argument outside a block is counted too.
  assert.equal(split("Use <arg_key>k</arg_key> like this").malformed, 1);
});

Deno.test("glm: streamed reasoning and text are prefixes of the final parse", async () => {
  for (const m of [glm45, glm5]) {
    const message: AssistantMessage = {
      role: "assistant",
      content: "Here we go 👩‍💻",
      reasoning_content: "Think 🤔",
      tool_calls: [{ id: "call_0", name: "bash", arguments: '{"command": "ls"}' }],
    };
    const { sent } = await streamAgainstParse(m, await m.renderAnswerIds(message), { tools });
    assert.deepEqual(sent, { reasoning: "Think 🤔", text: "Here we go 👩‍💻" });
  }
});

Deno.test("glm-5.3: effort preamble, always an explicit think block, results in call order", async () => {
  const glm53 = await PolicyModel.load({ dir: DIR, family: "glm-5.3" });
  const { text } = await glm53.renderFull(conversation, tools);
  assert.ok(text.startsWith("[gMASK]<sop><|system|>Reasoning Effort: Max<|system|>\n# Tools"));
  // GLM-5.1's tool list: each tool's function object.
  assert.ok(text.includes('<tools>\n{"name": "bash", "parameters": '), text);
  const answered: Message[] = [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "a", name: "bash", arguments: '{"command": "ls"}' },
        { id: "b", name: "bash", arguments: '{"command": "pwd"}' },
      ],
    },
    { role: "tool", content: "second", tool_call_id: "b" },
    { role: "tool", content: "first", tool_call_id: "a" },
    { role: "assistant", content: "Done.", reasoning_content: "ok" },
    { role: "user", content: "thanks" },
  ];
  const later = (await glm53.renderFull(answered, [])).text;
  assert.equal(
    later,
    "[gMASK]<sop><|system|>Reasoning Effort: Max<|user|>go<|assistant|><think></think>" +
      "<tool_call>bash<arg_key>command</arg_key><arg_value>ls</arg_value></tool_call>" +
      "<tool_call>bash<arg_key>command</arg_key><arg_value>pwd</arg_value></tool_call>" +
      "<|observation|><tool_response>first</tool_response><tool_response>second" +
      "</tool_response><|assistant|><think>ok</think>Done.<|user|>thanks<|assistant|><think>",
  );
  assert.equal(glm53.format.quirks.dropsOldReasoning, false);
  const low = await PolicyModel.load({
    dir: DIR,
    family: "glm-5.3",
    templateKwargs: { reasoning_effort: "low", clear_thinking: true },
  });
  const cleared = (await low.renderFull(answered, [])).text;
  assert.ok(cleared.startsWith("[gMASK]<sop><|system|>Reasoning Effort: Low<|user|>"));
  assert.ok(cleared.includes("<|assistant|><think></think>Done.<|user|>thanks"), cleared);
  await assert.rejects(
    PolicyModel.load({ dir: DIR, family: "glm-5.3", templateKwargs: { enable_thinking: false } }),
    /glm-5.3 always thinks/,
  );
  await assert.rejects(
    PolicyModel.load({
      dir: DIR,
      family: "glm-5.3",
      templateKwargs: { reasoning_effort: "xhigh" },
    }),
    /reasoning_effort is "xhigh"; expected one of "low", "high", "max"/,
  );
  // The answer continues the prompt's <think>.
  const answer = await glm53.renderAnswerIds({
    role: "assistant",
    content: "Hi.",
    reasoning_content: "r",
  });
  assert.deepEqual(
    answer,
    await ids(glm53, "r", id(glm53, "</think>"), "Hi.", id(glm53, "<|user|>")),
  );
});
