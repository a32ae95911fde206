import assert from "node:assert/strict";
import type { AssistantMessage } from "../../canonical/mod.ts";
import { referencePython } from "../reference/python_env.ts";
import {
  generateConversation,
  generateConversations,
  pythonJson,
  qwen3SampledText,
  Rng,
} from "./conversation_generator.ts";
import { referenceMissing, skipGroup } from "../support/skips.ts";

const SPECIAL =
  /<\|im_start\|>|<\|im_end\|>|<\|endoftext\|>|<\/?think>|<\/?tool_call>|<\/?tool_response>/;

Deno.test("generator: same seed, same conversation; other seed, other conversation", () => {
  assert.deepEqual(generateConversation(42), generateConversation(42));
  assert.notDeepEqual(generateConversation(42), generateConversation(43));
  const r = new Rng(1);
  const xs = Array.from({ length: 1000 }, () => r.next());
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  assert.ok(new Set(xs).size > 990);
});

Deno.test("generator: covers the shapes the invariants need", () => {
  const seen = new Set<string>();
  for (const c of generateConversations(1, 300)) {
    seen.add(`tools=${c.tools.length}`);
    const systems = c.messages.filter((m) => m.role === "system").length;
    if (systems > 1) seen.add("several system messages");
    if (
      c.messages.some((m, i) => m.role === "system" && i > 0 && c.messages[i - 1].role !== "system")
    ) {
      seen.add("mid-conversation system");
    }
    if (c.messages.filter((m) => m.role === "user").length > 1) seen.add("several user turns");
    if (
      c.messages.at(-1)!.role === "assistant" && (c.messages.at(-1) as AssistantMessage).tool_calls
    ) {
      seen.add("ends with a tool call");
    }
    if (c.ensureAscii) seen.add("ensure_ascii");
    for (const m of c.messages) {
      if (m.role === "tool") {
        if (m.content === "") seen.add("empty tool result");
        if (m.content.includes("\n")) seen.add("multi-line tool result");
        if (m.content.normalize("NFC") !== m.content) seen.add("non-NFC tool result");
        if (SPECIAL.test(m.content)) seen.add("special-token text in a tool result");
      }
      if (m.role === "assistant") {
        seen.add(`calls=${m.tool_calls?.length ?? 0}`);
        if (m.reasoning_content === "") seen.add("empty reasoning");
        // Assistant text is what a policy can emit: NFC, no special-token text, no leading "\n".
        for (const text of [m.content, m.reasoning_content ?? ""]) {
          assert.equal(text.normalize("NFC"), text);
          assert.ok(!SPECIAL.test(text), text);
          assert.ok(!text.startsWith("\n"), text);
        }
        if (m.tool_calls) assert.ok(m.reasoning_content, "tool-call turns reason");
        for (const call of m.tool_calls ?? []) JSON.parse(call.arguments);
      }
    }
    // Tool results answer the calls of the assistant message before them, in order.
    c.messages.forEach((m, i) => {
      if (m.role !== "tool") return;
      let j = i;
      while (c.messages[j].role !== "assistant") j--;
      const calls = (c.messages[j] as AssistantMessage).tool_calls!.map((x) => x.id);
      assert.ok(calls.includes(m.tool_call_id));
    });
    // Turn flags.
    c.turns.forEach((t, k) => {
      assert.equal(c.messages[t.index].role, "assistant");
      assert.equal(t.sampledText, qwen3SampledText(c.messages[t.index] as AssistantMessage));
      if (k === 0) assert.ok(t.prefixStable && t.reasoningKept);
      if (t.reasoningKept) assert.ok(t.prefixStable);
    });
    if (c.turns.some((t) => !t.prefixStable)) seen.add("new user turn after an answer");
    if (c.turns.some((t) => t.prefixStable && !t.reasoningKept)) seen.add("later tool loop");
  }
  for (
    const shape of [
      "tools=0",
      "tools=1",
      "tools=4",
      "calls=0",
      "calls=1",
      "calls=2",
      "calls=3",
      "several system messages",
      "mid-conversation system",
      "several user turns",
      "ends with a tool call",
      "ensure_ascii",
      "empty tool result",
      "multi-line tool result",
      "non-NFC tool result",
      "special-token text in a tool result",
      "empty reasoning",
      "new user turn after an answer",
      "later tool loop",
    ]
  ) {
    assert.ok(seen.has(shape), shape);
  }
});

Deno.test("generator: the Qwen3 sampled-text shape", () => {
  assert.equal(
    qwen3SampledText({
      role: "assistant",
      content: "Let me look.",
      reasoning_content: "Read it.",
      tool_calls: [
        { id: "a", name: "read_file", arguments: '{"path": "a.py"}' },
        { id: "b", name: "bash", arguments: "{}" },
      ],
    }),
    '<think>\nRead it.\n</think>\n\nLet me look.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>' +
      '\n<tool_call>\n{"name": "bash", "arguments": {}}\n</tool_call><|im_end|>',
  );
  assert.equal(
    qwen3SampledText({
      role: "assistant",
      content: "",
      reasoning_content: "R",
      tool_calls: [{ id: "a", name: "f", arguments: '{"x": 1}' }],
    }),
    '<think>\nR\n</think>\n\n<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call><|im_end|>',
  );
  assert.equal(
    qwen3SampledText({ role: "assistant", content: "4", reasoning_content: "" }),
    "<think>\n\n</think>\n\n4<|im_end|>",
  );
});

const PYTHON = referencePython();

Deno.test({
  name: `generator: pythonJson writes what Python's json.dumps writes${
    PYTHON ? "" : " (SKIPPED: no .venv; see tests/reference/requirements.txt)"
  }`,
  ignore: skipGroup("pythonJson against Python", referenceMissing()),
  async fn() {
    const values = [
      { a: 1, b: "x" },
      { path: "café/日本/😀", nested: { list: [1, true, null, 'a"b\\c\n\t\u0001'] } },
      { "key with space": [], "ключ": {}, "u2028": "\u2028\u2029" },
    ];
    const script = "import json,sys\nfor v in json.loads(sys.stdin.read()):\n" +
      "  print(json.dumps(v))\n  print(json.dumps(v, ensure_ascii=False))";
    const out = await new Deno.Command(PYTHON!, {
      args: ["-c", script],
      stdin: "piped",
      stdout: "piped",
    }).spawn();
    const writer = out.stdin.getWriter();
    await writer.write(new TextEncoder().encode(JSON.stringify(values)));
    await writer.close();
    const lines = new TextDecoder().decode((await out.output()).stdout).trimEnd().split("\n");
    assert.deepEqual(lines, values.flatMap((v) => [pythonJson(v, true), pythonJson(v, false)]));
  },
});
