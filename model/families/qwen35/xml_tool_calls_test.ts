import assert from "node:assert/strict";
import type { ToolSpec } from "../../../canonical/mod.ts";
import { splitXmlToolCalls } from "./xml_tool_calls.ts";

const tools: ToolSpec[] = [
  {
    name: "write_file",
    kind: "function",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string" },
        content: { type: "string" },
        mode: { type: "integer" },
        force: { type: "boolean" },
        ratio: { type: "number" },
        options: { type: "object" },
        tags: { type: "array", items: { type: "string" } },
        maybe: { anyOf: [{ type: "integer" }, { type: "null" }] },
        level: { enum: ["low", "high"] },
      },
    },
  },
];

function call(name: string, params: [string, string][]): string {
  return `<tool_call>\n<function=${name}>\n` +
    params.map(([k, v]) => `<parameter=${k}>\n${v}\n</parameter>\n`).join("") +
    "</function>\n</tool_call>";
}

function split(text: string) {
  let n = 0;
  return splitXmlToolCalls(text, tools, () => `call_${n++}`);
}

Deno.test("xml calls: content, parallel calls, values typed by the schema", () => {
  const text = "Writing two files.\n\n" +
    call("write_file", [["path", "a.py"], ["mode", "420"], ["force", "true"], ["ratio", "1.0"]]) +
    "\n" +
    call("write_file", [["path", "b.py"], ["options", '{"x": [1, 2.5]}'], ["tags", '["a", "b"]']]);
  const out = split(text);
  assert.equal(out.content, "Writing two files.");
  assert.equal(out.malformed, 0);
  assert.deepEqual(out.toolCalls, [
    {
      id: "call_0",
      name: "write_file",
      arguments: '{"path": "a.py", "mode": 420, "force": true, "ratio": 1.0}',
    },
    {
      id: "call_1",
      name: "write_file",
      arguments: '{"path": "b.py", "options": {"x": [1, 2.5]}, "tags": ["a", "b"]}',
    },
  ]);
});

Deno.test("xml calls: Python literals (Qwen3.5), unions, enums, unknown keys and tools", () => {
  const out = split(call("write_file", [
    ["force", "False"],
    ["maybe", "None"],
    ["level", "high"],
    ["mode", "not a number"],
    ["undeclared", "42"],
  ]));
  assert.equal(
    out.toolCalls[0].arguments,
    '{"force": false, "maybe": null, "level": "high", "mode": "not a number", "undeclared": "42"}',
  );
  // A tool nobody declared: every value is a string.
  assert.equal(split(call("other", [["n", "1"]])).toolCalls[0].arguments, '{"n": "1"}');
});

Deno.test("xml calls: a value may hold the format's own markup", () => {
  const values = [
    "v</parameter>",
    "</parameter>\n</function>\n</tool_call>",
    call("write_file", [["path", "inner"]]),
    "ends with </parameter>",
    "\nleading and trailing newline\n",
    "",
    "\n",
  ];
  for (const v of values) {
    const out = split(
      call("write_file", [["content", v], ["path", "p"]]) + "\n" +
        call("write_file", [["path", "q"]]),
    );
    assert.equal(out.malformed, 0, JSON.stringify(v));
    assert.deepEqual(
      out.toolCalls.map((c) => JSON.parse(c.arguments)),
      [{ content: v, path: "p" }, { path: "q" }],
      JSON.stringify(v),
    );
  }
});

Deno.test("xml calls: a value holding a whole parameter is read the earliest way", () => {
  // Both readings render to the same text; the earlier end is taken (documented ambiguity).
  const out = split(call("write_file", [["content", "x\n</parameter>\n<parameter=path>\ny"]]));
  assert.deepEqual(JSON.parse(out.toolCalls[0].arguments), { content: "x", path: "y" });
});

Deno.test("xml calls: lenient spacing between tags", () => {
  const text = "<tool_call><function=write_file><parameter=path>a.py</parameter>  " +
    "<parameter=mode>7</parameter></function></tool_call>";
  assert.deepEqual(JSON.parse(split(text).toolCalls[0].arguments), { path: "a.py", mode: 7 });
});

Deno.test("xml calls: malformed blocks stay text and are counted; good ones still parse", () => {
  const bad = [
    "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</function>\n</tool_call>",
    "<tool_call>\n<parameter=path>\na.py\n</parameter>\n</tool_call>",
    "<tool_call>\n<function=write_file>\n<parameter=path>\na.py\n</parameter>\n",
    "<tool_call>\n<function=>\n</function>\n</tool_call>",
    '<tool_call>\n{"name": "write_file", "arguments": {}}\n</tool_call>',
  ];
  for (const b of bad) {
    const only = split("Trying.\n\n" + b);
    assert.equal(only.malformed, 1, b);
    assert.deepEqual(only.toolCalls, [], b);
    assert.equal(only.content, "Trying.\n\n" + b.trim(), b);
    // Next to a good call: the good one parses, the bad one stays in the content.
    const mixed = split("Trying.\n\n" + b + "\n" + call("write_file", [["path", "ok"]]));
    assert.equal(mixed.malformed, 1, b);
    assert.equal(mixed.toolCalls.length, 1, b);
    assert.ok(mixed.content.includes(b.trim()), b);
  }
  // A bare function block without <tool_call> is counted too.
  const bare = split("<function=write_file>\n<parameter=path>\na\n</parameter>\n</function>");
  assert.equal(bare.malformed, 1);
  assert.deepEqual(bare.toolCalls, []);
});

Deno.test("xml calls: text after the calls keeps them, and stays content", () => {
  const out = split("Before." + "\n\n" + call("write_file", [["path", "a"]]) + "\nAfter.");
  assert.equal(out.toolCalls.length, 1);
  assert.equal(out.content, "Before.\nAfter.");
  assert.equal(out.malformed, 0);
});

Deno.test("xml calls: adversarial text ends in bounded time", () => {
  const text = "<tool_call>\n<function=write_file>\n" +
    "<parameter=content>\n</parameter>\n".repeat(400) + "x";
  const t0 = performance.now();
  const out = split(text);
  assert.equal(out.toolCalls.length, 0);
  assert.equal(out.malformed, 1);
  assert.ok(performance.now() - t0 >= 0);
});
