import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../canonical/mod.ts";
import type { Turn, TurnStatus } from "../turn.ts";
import { TurnTree } from "./turn_tree.ts";

/** Just the fields the tree reads. */
function turn(
  name: string,
  status: TurnStatus = "pending",
  message?: AssistantMessage,
  session: string | null = null,
): Turn {
  return { id: name, status, message, session } as unknown as Turn;
}

const tools: ToolSpec[] = [{ name: "bash", kind: "function", parameters: { type: "object" } }];
const KEY = TurnTree.toolsKey(tools);
const sys: Message = { role: "system", content: "S" };
const u1: Message = { role: "user", content: "list files" };
const a1: AssistantMessage = {
  role: "assistant",
  content: "",
  reasoning_content: "ls",
  tool_calls: [{ id: "call_1", name: "bash", arguments: '{"command": "ls"}' }],
};
const r1: Message = { role: "tool", content: "a.py", tool_call_id: "call_1" };
const a2: AssistantMessage = { role: "assistant", content: "One file.", reasoning_content: "done" };
const u2: Message = { role: "user", content: "thanks" };

/** Mounts, attaches and (optionally) records the answer, as the turn runner does. */
function run(tree: TurnTree, history: Message[], t: Turn, key = KEY) {
  const mount = tree.mount(history, key);
  const node = tree.attach(mount, history, t);
  return { mount, record: () => tree.recordAnswer(node, t) };
}

Deno.test("TurnTree: first request mounts nowhere (root)", () => {
  const tree = new TurnTree();
  const m = tree.mount([sys, u1], KEY);
  assert.equal(m.base, null);
  assert.equal(m.retryOf, null);
  assert.equal(m.matched, 0);
  assert.equal(m.baseDepth, 0);
});

Deno.test("TurnTree: the same history again is a retry of the live turn", () => {
  const tree = new TurnTree();
  const t1 = turn("t1");
  run(tree, [sys, u1], t1);
  // Pending: a retry re-attaches to it.
  assert.equal(tree.mount([sys, u1], KEY).retryOf, t1);
  t1.status = "done";
  assert.equal(tree.mount([sys, u1], KEY).retryOf, t1);
  // A failed turn is not replayed: the request becomes a new turn.
  t1.status = "failed";
  assert.equal(tree.mount([sys, u1], KEY).retryOf, null);
  // A prefix of a recorded history is not a retry.
  assert.equal(tree.mount([sys], KEY).retryOf, null);
});

Deno.test("TurnTree: a history through a recorded answer extends that turn", () => {
  const tree = new TurnTree();
  const t1 = turn("t1", "pending", a1);
  const first = run(tree, [sys, u1], t1);
  t1.status = "done";
  first.record();
  const m = tree.mount([sys, u1, a1, r1], KEY);
  assert.equal(m.base, t1);
  assert.equal(m.baseDepth, 3);
  assert.equal(m.matched, 3);
  assert.equal(m.retryOf, null);

  // The client's echo may re-serialize arguments: still the same answer.
  const echoed = { ...a1, tool_calls: [{ ...a1.tool_calls![0], arguments: '{"command":"ls"}' }] };
  assert.equal(tree.mount([sys, u1, echoed, r1], KEY).base, t1);

  // Deeper: the second turn becomes the base, even after a new user message.
  const t2 = turn("t2", "pending", a2);
  const second = run(tree, [sys, u1, a1, r1], t2);
  t2.status = "done";
  second.record();
  const m3 = tree.mount([sys, u1, a1, r1, a2, u2], KEY);
  assert.equal(m3.base, t2);
  assert.equal(m3.baseDepth, 5);
});

Deno.test("TurnTree: an answer not yet done is no base", () => {
  const tree = new TurnTree();
  const t1 = turn("t1", "pending", a1);
  run(tree, [u1], t1).record();
  assert.equal(tree.mount([u1, a1, r1], KEY).base, null);
  t1.status = "done";
  assert.equal(tree.mount([u1, a1, r1], KEY).base, t1);
});

Deno.test("TurnTree: an edited history (rewritten) mounts only up to the edit", () => {
  const tree = new TurnTree();
  const t1 = turn("t1", "done", a1);
  run(tree, [sys, u1], t1).record();
  // A different answer than the sampled one (the client changed it).
  const edited = { ...a1, content: "I will list files." };
  const m = tree.mount([sys, u1, edited, r1], KEY);
  assert.equal(m.base, null);
  assert.equal(m.matched, 2);
  // An edited first message shares nothing.
  const m2 = tree.mount([sys, { role: "user", content: "list all files" }, a1, r1], KEY);
  assert.equal(m2.base, null);
  assert.equal(m2.matched, 1);
  // Another tool set is another tree.
  const m3 = tree.mount([sys, u1, a1, r1], TurnTree.toolsKey([]));
  assert.equal(m3.base, null);
  assert.equal(m3.matched, 0);
});

Deno.test("TurnTree: the first of two identical answers stays the base", () => {
  const tree = new TurnTree();
  const t1 = turn("t1", "done", a1), t2 = turn("t2", "done", a1);
  const node = tree.attach(tree.mount([u1], KEY), [u1], t1);
  tree.recordAnswer(node, t1);
  tree.recordAnswer(node, t2);
  assert.equal(tree.mount([u1, a1, r1], KEY).base, t1);
});

Deno.test("TurnTree: with a client session, only that session's turn is a retry", () => {
  const tree = new TurnTree();
  const t1 = turn("t1", "done", undefined, "A");
  tree.attach(tree.mount([sys, u1], KEY, "A"), [sys, u1], t1);
  assert.equal(tree.mount([sys, u1], KEY, "A").retryOf, t1);
  assert.equal(tree.mount([sys, u1], KEY, "B").retryOf, null, "another session: a fresh sample");
  assert.equal(tree.mount([sys, u1], KEY).retryOf, t1, "no session: content alone");
  const t2 = turn("t2", "done", undefined, "B");
  tree.attach(tree.mount([sys, u1], KEY, "B"), [sys, u1], t2);
  assert.equal(tree.mount([sys, u1], KEY, "B").retryOf, t2);
  assert.equal(tree.mount([sys, u1], KEY, "A").retryOf, t1);
});

Deno.test("TurnTree: of two identical answers, a session's own is its base", () => {
  const tree = new TurnTree();
  const t1 = turn("t1", "done", a1, "A"), t2 = turn("t2", "done", a1, "B");
  const node = tree.attach(tree.mount([u1], KEY, "A"), [u1], t1);
  tree.attach(tree.mount([u1], KEY, "B"), [u1], t2);
  tree.recordAnswer(node, t1);
  tree.recordAnswer(node, t2);
  assert.equal(tree.mount([u1, a1, r1], KEY, "B").base, t2);
  assert.equal(tree.mount([u1, a1, r1], KEY, "A").base, t1);
  assert.equal(tree.mount([u1, a1, r1], KEY, "C").base, t1, "no own answer: the first");
  assert.equal(tree.mount([u1, a1, r1], KEY).base, t1);
});

Deno.test("TurnTree.toolsKey: tools order, description and schema matter", () => {
  const a: ToolSpec = { name: "a", kind: "function", parameters: { type: "object" } };
  const b: ToolSpec = { name: "b", kind: "function" };
  assert.notEqual(TurnTree.toolsKey([a, b]), TurnTree.toolsKey([b, a]));
  assert.notEqual(TurnTree.toolsKey([a]), TurnTree.toolsKey([{ ...a, description: "d" }]));
  assert.notEqual(TurnTree.toolsKey([a]), TurnTree.toolsKey([{ ...a, parameters: {} }]));
  assert.equal(TurnTree.toolsKey([a]), TurnTree.toolsKey([{ ...a, raw: { anything: 1 } }]));
});

Deno.test("TurnTree.rootKey: made once per tools array and protocol, equal for equal tools", () => {
  const chat = TurnTree.rootKey({ protocol: "chat", tools });
  assert.equal(TurnTree.rootKey({ protocol: "chat", tools }), chat);
  const copy = structuredClone(tools);
  assert.equal(TurnTree.rootKey({ protocol: "chat", tools: copy }), chat, "same tools, same root");
  // The same array under another protocol is another root, and asking again does not mix them.
  const anthropic = TurnTree.rootKey({ protocol: "anthropic", tools });
  assert.notEqual(anthropic, chat);
  assert.equal(TurnTree.rootKey({ protocol: "chat", tools }), chat);
  assert.equal(anthropic, `anthropic\u0000${KEY}`);
  const other: ToolSpec[] = [{ ...tools[0], description: "run a command" }];
  assert.notEqual(TurnTree.rootKey({ protocol: "chat", tools: other }), chat, "other tools");
});
