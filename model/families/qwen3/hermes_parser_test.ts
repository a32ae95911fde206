import assert from "node:assert/strict";
import { PolicyModel } from "../../policy_model.ts";
import type { ParsedOutput } from "../../parsers/mod.ts";
import { HermesParser, splitToolCalls } from "./hermes_parser.ts";

const model = await PolicyModel.load();
assert.ok(model.parser instanceof HermesParser);

/** Parses the ids of `text` as the policy's output; tool-call ids are `id0`, `id1`, … */
async function parse(text: string): Promise<ParsedOutput & { ids: number[] }> {
  const ids = await model.tokenizer.encode(text);
  let n = 0;
  return { ...await model.parse(ids, () => `id${n++}`), ids };
}

Deno.test("hermes parser: reasoning and content", async () => {
  const out = await parse("<think>\nThe user greets.\n</think>\n\nHello!<|im_end|>");
  assert.deepEqual(out.message, {
    role: "assistant",
    content: "Hello!",
    reasoning_content: "The user greets.",
  });
  assert.equal(out.malformedToolCalls, 0);
  // `<think>` … `</think>` inclusive.
  assert.equal(out.reasoningTokens, out.ids.indexOf(model.idOf("</think>")!) + 1);
});

Deno.test("hermes parser: multi-line reasoning keeps inner newlines and spaces", async () => {
  const out = await parse("<think>\n\n  Step 1.\n\nStep 2.  \n\n</think>\n\nDone.<|im_end|>");
  assert.equal(out.message.reasoning_content, "  Step 1.\n\nStep 2.  ");
  assert.equal(out.message.content, "Done.");
});

Deno.test("hermes parser: no think block, no end-of-turn", async () => {
  const out = await parse("Just text.");
  assert.deepEqual(out.message, { role: "assistant", content: "Just text." });
  assert.equal(out.reasoningTokens, 0);
});

Deno.test("hermes parser: `</think>` without `<think>` (generation prompt opened it)", async () => {
  const out = await parse("Thinking here.\n</think>\n\nAnswer.<|im_end|>");
  assert.equal(out.message.reasoning_content, "Thinking here.");
  assert.equal(out.message.content, "Answer.");
});

Deno.test("hermes parser: truncated `<think>` (cut off while reasoning)", async () => {
  const out = await parse("<think>\nLet me think about this for a wh");
  assert.deepEqual(out.message, {
    role: "assistant",
    content: "",
    reasoning_content: "Let me think about this for a wh",
  });
  assert.equal(out.reasoningTokens, out.ids.length);
});

Deno.test("hermes parser: several tool calls, with content, raw arguments kept", async () => {
  const text = "<think>\nTwo calls.\n</think>\n\nLet me check both.\n" +
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>\n' +
    '<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la", "timeout": 1.0}}\n</tool_call>\n' +
    '<tool_call>\n{"name": "noop", "arguments": {}}\n</tool_call><|im_end|>';
  const out = await parse(text);
  assert.deepEqual(out.message, {
    role: "assistant",
    content: "Let me check both.",
    reasoning_content: "Two calls.",
    tool_calls: [
      { id: "id0", name: "read_file", arguments: '{"path": "a.py"}' },
      // `1.0` stays `1.0`: the raw text, not a re-serialization.
      { id: "id1", name: "bash", arguments: '{"command": "ls -la", "timeout": 1.0}' },
      { id: "id2", name: "noop", arguments: "{}" },
    ],
  });
  assert.equal(out.malformedToolCalls, 0);
});

Deno.test("hermes parser: raw argument spacing is kept (compact and odd spacing)", async () => {
  const out = await parse(
    '<tool_call>\n{"name":"f","arguments":{"a":1,  "b" : [1,2], "c":{"d":"x y"}}}\n</tool_call><|im_end|>',
  );
  assert.equal(out.message.tool_calls![0].arguments, '{"a":1,  "b" : [1,2], "c":{"d":"x y"}}');
  assert.equal(out.message.content, "");
});

Deno.test("hermes parser: arguments given as a JSON string holding an object", async () => {
  const out = await parse(
    '<tool_call>\n{"name": "f", "arguments": "{\\"a\\": 1}"}\n</tool_call><|im_end|>',
  );
  assert.deepEqual(out.message.tool_calls, [{ id: "id0", name: "f", arguments: '{"a": 1}' }]);
  // A string that is not a JSON object is malformed.
  const bad = await parse('<tool_call>\n{"name": "f", "arguments": "[1, 2]"}\n</tool_call>');
  assert.equal(bad.malformedToolCalls, 1);
  assert.equal(bad.message.tool_calls, undefined);
});

Deno.test("hermes parser: missing arguments become {}", async () => {
  const out = await parse('<tool_call>\n{"name": "now"}\n</tool_call><|im_end|>');
  assert.deepEqual(out.message.tool_calls, [{ id: "id0", name: "now", arguments: "{}" }]);
});

Deno.test("hermes parser: a malformed tool call stays text and is counted", async () => {
  const broken = '<tool_call>\n{"name": "f", "arguments": {"a": }\n</tool_call>';
  const good = '<tool_call>\n{"name": "g", "arguments": {"b": 2}}\n</tool_call>';
  const out = await parse(`<think>\nOops.\n</think>\n\nTrying.\n${broken}\n${good}<|im_end|>`);
  assert.equal(out.malformedToolCalls, 1);
  assert.deepEqual(out.message.tool_calls, [{ id: "id0", name: "g", arguments: '{"b": 2}' }]);
  assert.equal(out.message.content, `Trying.\n${broken}`);

  const only = await parse(`Trying.\n${broken}<|im_end|>`);
  assert.equal(only.malformedToolCalls, 1);
  assert.equal(only.message.tool_calls, undefined);
  assert.equal(only.message.content, `Trying.\n${broken}`);
});

Deno.test("hermes parser: other malformed shapes", async () => {
  for (
    const body of [
      '{"arguments": {}}', // no name
      '{"name": "", "arguments": {}}', // empty name
      '{"name": "f", "arguments": [1]}', // arguments not an object
      '["f", {}]', // not an object
      "not json at all",
    ]
  ) {
    const out = await parse(`<tool_call>\n${body}\n</tool_call><|im_end|>`);
    assert.equal(out.malformedToolCalls, 1, body);
    assert.equal(out.message.tool_calls, undefined, body);
    assert.equal(out.message.content, `<tool_call>\n${body}\n</tool_call>`, body);
  }
});

Deno.test("hermes parser: end-of-turn ids are not content (`<|im_end|>`, `<|endoftext|>`)", async () => {
  const out = await parse("Hi.<|im_end|><|endoftext|>");
  assert.equal(out.message.content, "Hi.");
});

Deno.test("splitToolCalls: content before, between and after calls", () => {
  let n = 0;
  const id = () => `c${n++}`;
  const call = (name: string) => `<tool_call>\n{"name": "${name}", "arguments": {}}\n</tool_call>`;
  const out = splitToolCalls(`Before.\n${call("a")}\nbetween\n${call("b")}\nafter`, id);
  assert.equal(out.content, "Before.\nbetween\nafter");
  assert.deepEqual(out.toolCalls.map((c) => [c.id, c.name]), [["c0", "a"], ["c1", "b"]]);
  // Content that ends with newlines keeps all but the one the template adds.
  assert.equal(splitToolCalls(`Text\n\n${call("a")}`, id).content, "Text\n");
  assert.equal(splitToolCalls(call("a"), id).content, "");
});

Deno.test("hermes parser: the JS tokenizer engine parses the same (empty bodies included)", async () => {
  const js = await PolicyModel.load({ engine: "js" });
  assert.equal(js.tokenizer.engine, "js");
  for (
    const text of [
      "<think>\nCut off while thin",
      "<think></think>Hi",
      '<think>\nR\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>',
    ]
  ) {
    const ids = await model.tokenizer.encode(text);
    let a = 0, b = 0;
    assert.deepEqual(
      await js.parse(ids, () => `id${a++}`),
      await model.parse(ids, () => `id${b++}`),
      text,
    );
  }
});

Deno.test("hermes parser: a JSON string holding `</tool_call>` does not cut the call short", async () => {
  const args = '{"code": "x = \\"</tool_call>\\"", "n": 1}';
  const next = '<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>';
  const out = await parse(
    `<tool_call>\n{"name": "f", "arguments": ${args}}\n</tool_call>\n${next}`,
  );
  assert.equal(out.malformedToolCalls, 0);
  assert.deepEqual(out.message.tool_calls, [
    { id: "id0", name: "f", arguments: args },
    { id: "id1", name: "g", arguments: "{}" },
  ]);
});

Deno.test("hermes parser: a call never closed (cut off) is text, counted as malformed", async () => {
  const text = 'Checking.\n<tool_call>\n{"name": "f", "arguments": {"a": ';
  const out = await parse(text);
  assert.equal(out.malformedToolCalls, 1);
  assert.equal(out.message.tool_calls, undefined);
  assert.equal(out.message.content, text);
});
