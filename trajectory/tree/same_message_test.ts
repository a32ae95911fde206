import assert from "node:assert/strict";
import type { AssistantMessage, Message } from "../../canonical/mod.ts";
import { identicalJson, sameForm, sameJson, sameMessage } from "./same_message.ts";

Deno.test("sameJson: key order does not matter, array order does", () => {
  assert.ok(sameJson({ a: 1, b: { c: [1, 2], d: "x" } }, { b: { d: "x", c: [1, 2] }, a: 1 }));
  assert.ok(!sameJson({ a: [1, 2] }, { a: [2, 1] }));
  assert.ok(!sameJson({ a: 1 }, { a: 2 }));
  assert.ok(!sameJson({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!sameJson({ a: "1" }, { a: 1 }));
  assert.ok(!sameJson([], {}));
  assert.ok(!sameJson({}, []));
  assert.ok(sameJson([], []));
  assert.ok(sameJson("x", "x"));
  assert.ok(!sameJson("x", "y"));
});

Deno.test("sameJson: null members count as absent (objects only)", () => {
  assert.ok(sameJson({ a: 1, b: null }, { a: 1 }));
  assert.ok(sameJson({ a: 1 }, { b: null, a: 1 }));
  assert.ok(sameJson({ n: { x: null } }, { n: {} }));
  // …but not inside arrays, and null is not an empty object.
  assert.ok(!sameJson([null], []));
  assert.ok(!sameJson({ a: null }, { a: {} }));
  assert.ok(sameJson(null, null));
  assert.ok(!sameJson(null, {}));
});

const call = (args: string, id = "call_1"): AssistantMessage => ({
  role: "assistant",
  content: "",
  reasoning_content: "r",
  tool_calls: [{ id, name: "bash", arguments: args }],
});

Deno.test("sameMessage: re-serialized, re-ordered and null-padded arguments match", () => {
  const sampled = call('{"command": "ls -la", "timeout": 1.0, "env": {"A": "b"}}');
  for (
    const echoed of [
      '{"command":"ls -la","timeout":1.0,"env":{"A":"b"}}', // pi: JSON.stringify
      '{"timeout": 1, "env": {"A": "b"}, "command": "ls -la"}', // re-ordered, 1.0 → 1
      '{\n  "command": "ls -la",\n  "timeout": 1,\n  "env": {"A": "b"},\n  "cwd": null\n}',
    ]
  ) {
    assert.ok(sameMessage(sampled, call(echoed)), echoed);
  }
  assert.ok(!sameMessage(sampled, call('{"command": "ls"}')));
  assert.ok(!sameMessage(sampled, call('{"command": "ls -la", "timeout": 2, "env": {"A": "b"}}')));
});

Deno.test("sameMessage: unparseable arguments compare verbatim", () => {
  assert.ok(sameMessage(call("{not json"), call("{not json")));
  assert.ok(!sameMessage(call("{not json"), call("{not  json")));
  assert.ok(!sameMessage(call("{not json"), call("{}")));
});

Deno.test("sameMessage: ids are verbatim", () => {
  assert.ok(!sameMessage(call("{}", "call_1"), call("{}", "call_2")));
  const tool = (id: string): Message => ({ role: "tool", content: "ok", tool_call_id: id });
  assert.ok(sameMessage(tool("a"), tool("a")));
  assert.ok(!sameMessage(tool("a"), tool("b")));
  // The tool name is not part of the identity (some protocols drop it).
  assert.ok(sameMessage({ ...tool("a"), name: "bash" } as Message, tool("a")));
});

Deno.test("sameMessage: role, content, reasoning, tool-call count and names", () => {
  assert.ok(sameMessage({ role: "user", content: "hi" }, { role: "user", content: "hi" }));
  assert.ok(!sameMessage({ role: "user", content: "hi" }, { role: "system", content: "hi" }));
  assert.ok(!sameMessage({ role: "user", content: "hi" }, { role: "user", content: "hi " }));
  const a: AssistantMessage = { role: "assistant", content: "x" };
  // Missing and empty reasoning are the same; different reasoning is not.
  assert.ok(sameMessage(a, { ...a, reasoning_content: "" }));
  assert.ok(!sameMessage(a, { ...a, reasoning_content: "thought" }));
  // Missing and empty tool calls are the same.
  assert.ok(sameMessage(a, { ...a, tool_calls: [] }));
  assert.ok(!sameMessage(call("{}"), { ...call("{}"), tool_calls: [] }));
  const renamed = call("{}");
  renamed.tool_calls![0].name = "sh";
  assert.ok(!sameMessage(call("{}"), renamed));
});

Deno.test("sameForm: what sameMessage tolerates, in the client's exact form or not", () => {
  const call = { id: "c1", name: "bash", arguments: '{"command": "ls"}' };
  const a: Message = { role: "assistant", content: "x", tool_calls: [call] };
  assert.ok(sameForm(a, structuredClone(a)));
  const reserialized: Message = {
    role: "assistant",
    content: "x",
    tool_calls: [{ ...call, arguments: '{"command":"ls"}' }],
  };
  assert.ok(sameMessage(a, reserialized) && !sameForm(a, reserialized));
  const reordered = { content: "x", role: "assistant", tool_calls: [call] } as Message;
  assert.ok(sameMessage(a, reordered) && !sameForm(a, reordered), "key order is form");
  const empty: Message = { ...a, reasoning_content: "" };
  assert.ok(sameMessage(a, empty) && !sameForm(a, empty));
  const tool: Message = { role: "tool", content: "out", tool_call_id: "c1" };
  assert.ok(!sameForm(tool, { ...tool, name: "bash" }));
  assert.ok(identicalJson({ a: [1, { b: null }] }, { a: [1, { b: null }] }));
  assert.ok(!identicalJson({ a: 1, b: 2 }, { b: 2, a: 1 }));
  assert.ok(!identicalJson([1], { 0: 1 }));
});

Deno.test("JSON comparisons walk nesting of any depth without running out of stack", () => {
  const nest = (depth: number, leaf: unknown) => {
    let v: unknown = leaf;
    for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v, n: null };
    return v;
  };
  const deep = nest(200_000, 1);
  assert.ok(identicalJson(deep, nest(200_000, 1)));
  assert.ok(!identicalJson(deep, nest(200_000, 2)));
  assert.ok(sameJson(deep, nest(200_000, 1)));
  assert.ok(!sameJson(deep, nest(199_999, 1)));
  const text = JSON.stringify({ a: 1 });
  assert.ok(sameJson(JSON.parse(text), { a: 1, b: null }), "null members are absent");
  assert.ok(!sameJson({ a: 1, b: null }, { a: 1, b: 2 }));
});

Deno.test("sameMessage: images compare by hash and place, in user and tool content", () => {
  const image = (hash: string) => ({ hash, mime: "image/png" as const, width: 2, height: 2 });
  const user = (at: number, hash: string): Message => ({
    role: "user",
    content: "ab",
    images: [{ at, image: image(hash) }],
  });
  assert.ok(sameMessage(user(1, "h1"), user(1, "h1")));
  assert.ok(!sameMessage(user(1, "h1"), user(1, "h2")), "another image");
  assert.ok(!sameMessage(user(1, "h1"), user(0, "h1")), "the same image elsewhere");
  assert.ok(!sameMessage(user(1, "h1"), { role: "user", content: "ab" }), "no image");
  assert.ok(
    sameMessage({ role: "user", content: "ab", images: [] }, { role: "user", content: "ab" }),
  );
  const tool = (hash: string): Message => ({
    role: "tool",
    content: "",
    tool_call_id: "c",
    images: [{ at: 0, image: image(hash) }],
  });
  assert.ok(sameMessage(tool("h1"), tool("h1")));
  assert.ok(!sameMessage(tool("h1"), tool("h2")));
});
