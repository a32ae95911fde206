import assert from "node:assert/strict";
import type { AssistantMessage } from "../../../canonical/mod.ts";
import { InvalidRequestError } from "../../protocol.ts";
import { loadPiRecords } from "./pi_fixture.ts";
import { toCanonicalRequest } from "./to_canonical.ts";
import { fixtureImage } from "../../../tests/support/image_files.ts";

const [first, second] = loadPiRecords();
const PNG = await fixtureImage();
const JPEG = await fixtureImage("baseline-640x480.jpg");
const CALL = { id: "c1", type: "function", function: { name: "f", arguments: "{}" } };

Deno.test("pi request 1: developer prompt becomes system, user parts flattened", () => {
  const req = toCanonicalRequest(first.body);
  const wire = first.body.messages as { content: unknown }[];
  assert.equal(req.protocol, "chat");
  assert.equal(req.model, "policy-model-v1");
  assert.equal(req.stream, true);
  assert.equal(req.includeUsage, true);
  assert.deepEqual(req.sampling, { max_tokens: 16384 });
  assert.equal(req.messages.length, 2);
  assert.deepEqual(req.messages[0], { role: "system", content: wire[0].content });
  assert.match(req.messages[0].content, /^You are an expert coding assistant operating inside pi/);
  assert.deepEqual(req.messages[1], { role: "user", content: "Create probe.txt then list files" });
});

Deno.test("pi request 1: the four function tools convert, raw kept", () => {
  const req = toCanonicalRequest(first.body);
  const wireTools = first.body.tools as { function: { parameters: unknown } }[];
  assert.deepEqual(req.tools.map((t) => t.name), ["read", "bash", "edit", "write"]);
  for (const [i, tool] of req.tools.entries()) {
    assert.equal(tool.kind, "function");
    assert.deepEqual(tool.raw, wireTools[i]);
    assert.deepEqual(tool.parameters, wireTools[i].function.parameters);
    assert.ok(tool.description && tool.description.length > 20);
  }
  assert.deepEqual((req.tools[1].parameters as { required: string[] }).required, ["command"]);
});

Deno.test("pi request 2: assistant echo and tool result keep the recorded values", () => {
  const req = toCanonicalRequest(second.body);
  assert.equal(req.messages.length, 4);
  assert.deepEqual(req.messages[2], {
    role: "assistant",
    content: "I will run a command.",
    reasoning_content: "I should run a command.",
    tool_calls: [{
      id: "call_b933104d9647aaae26ce4812",
      name: "bash",
      arguments: '{"command":"echo probe-ok > probe.txt && ls -a"}',
    }],
  });
  // The echo is what request 1 replied.
  assert.equal(
    (req.messages[2] as AssistantMessage).tool_calls?.[0].arguments,
    first.reply.tool_calls?.[0].function.arguments,
  );
  assert.deepEqual(req.messages[3], {
    role: "tool",
    content: ".\n..\n.git\nREADME.md\nprobe.txt\n",
    tool_call_id: "call_b933104d9647aaae26ce4812",
  });
});

/** A minimal valid body with the given messages (and extra fields). */
function body(messages: unknown[], extra: Record<string, unknown> = {}) {
  return { model: "m", messages, ...extra };
}

Deno.test("content forms: null, text parts, images, media placeholders, refusal", () => {
  const req = toCanonicalRequest(body([
    { role: "system", content: null },
    {
      role: "user",
      content: [
        { type: "text", text: "look:" },
        { type: "image_url", image_url: { url: JPEG.dataUrl, detail: "high" } },
        { type: "input_audio", input_audio: { data: "", format: "wav" } },
        { type: "file", file: { file_id: "f" } },
      ],
    },
    { role: "assistant", content: "", tool_calls: [CALL] },
    { role: "tool", tool_call_id: "c1", content: [{ type: "image_url", image_url: PNG.dataUrl }] },
    {
      role: "assistant",
      content: [{ type: "text", text: "a" }, { type: "refusal", refusal: "no" }],
    },
  ]));
  assert.deepEqual(req.messages, [
    { role: "system", content: "" },
    { role: "user", content: "look:[audio]\n[file]", images: [{ at: 5, image: JPEG.ref }] },
    { role: "assistant", content: "", tool_calls: [{ id: "c1", name: "f", arguments: "{}" }] },
    { role: "tool", content: "", images: [{ at: 0, image: PNG.ref }], tool_call_id: "c1" },
    { role: "assistant", content: "a\nno" },
  ]);
  assert.deepEqual([...req.images!.keys()], [JPEG.ref.hash, PNG.ref.hash]);
});

Deno.test("images: a remote URL, a non-base64 data URL, an image in a system message are 400s", () => {
  const user = (url: string) =>
    body([{ role: "user", content: [{ type: "image_url", image_url: { url } }] }]);
  for (
    const [b, pattern] of [
      [user("https://example.com/a.png"), /does not fetch remote images \(https:/],
      [user("data:image/png,%89PNG"), /data: URL without base64/],
      [user("data:image/png;base64,!!"), /not base64/],
      [
        body([{
          role: "system",
          content: [{ type: "image_url", image_url: { url: PNG.dataUrl } }],
        }]),
        /user and tool messages only/,
      ],
    ] as const
  ) {
    assert.throws(() => toCanonicalRequest(b), (e: Error) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.match(e.message, /messages\[0\]\.content\[0\]\.image_url/);
      assert.match(e.message, pattern);
      return true;
    });
  }
});

Deno.test("assistant: null content, reasoning fallback, empty fields omitted, custom calls", () => {
  const req = toCanonicalRequest(body([
    { role: "assistant", content: null, reasoning: "thought", tool_calls: [] },
    { role: "assistant", content: "x", reasoning_content: "", reasoning: { effort: "low" } },
    { role: "assistant", content: "y", reasoning_content: "main", reasoning: "ignored" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: "call_1",
        type: "custom",
        custom: { name: "apply_patch", input: "*** P" },
      }],
    },
  ]));
  assert.deepEqual(req.messages, [
    { role: "assistant", content: "", reasoning_content: "thought" },
    { role: "assistant", content: "x" },
    { role: "assistant", content: "y", reasoning_content: "main" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{
        id: "call_1",
        name: "apply_patch",
        arguments: '{"input":"*** P"}',
        kind: "custom",
      }],
    },
  ]);
});

Deno.test("legacy function_call / function role link by name", () => {
  const req = toCanonicalRequest(body([
    { role: "assistant", content: null, function_call: { name: "f", arguments: "{}" } },
    { role: "function", name: "f", content: "out" },
  ]));
  assert.deepEqual(req.messages, [
    { role: "assistant", content: "", tool_calls: [{ id: "f", name: "f", arguments: "{}" }] },
    { role: "tool", content: "out", tool_call_id: "f" },
  ]);
});

Deno.test("tools: default parameters, custom tools, other types dropped", () => {
  const custom = { type: "custom", custom: { name: "apply_patch", description: "patch" } };
  const req = toCanonicalRequest(body([{ role: "user", content: "hi" }], {
    tools: [
      { type: "function", function: { name: "noargs" } },
      custom,
      { type: "web_search_preview" },
    ],
  }));
  assert.deepEqual(req.tools, [
    {
      name: "noargs",
      parameters: { type: "object", properties: {} },
      kind: "function",
      raw: { type: "function", function: { name: "noargs" } },
    },
    {
      name: "apply_patch",
      description: "patch",
      parameters: {
        type: "object",
        properties: { input: { type: "string" } },
        required: ["input"],
      },
      kind: "custom",
      raw: custom,
    },
  ]);
});

Deno.test("sampling: max_completion_tokens wins, stop string → array; stream defaults", () => {
  const req = toCanonicalRequest(body([{ role: "user", content: "hi" }], {
    max_tokens: 10,
    max_completion_tokens: 20,
    temperature: 0.5,
    top_p: 0.9,
    stop: "END",
  }));
  assert.deepEqual(req.sampling, { max_tokens: 20, temperature: 0.5, top_p: 0.9, stop: ["END"] });
  assert.equal(req.stream, false);
  assert.equal(req.includeUsage, false);

  const legacy = toCanonicalRequest(body([{ role: "user", content: "hi" }], {
    max_tokens: 10,
    stop: ["a", "b"],
    stream: true,
    stream_options: { include_usage: false },
  }));
  assert.deepEqual(legacy.sampling, { max_tokens: 10, stop: ["a", "b"] });
  assert.equal(legacy.stream, true);
  assert.equal(legacy.includeUsage, false);
});

Deno.test("unknown fields are accepted untouched", () => {
  const req = toCanonicalRequest(body(
    [{ role: "user", content: "hi", name: "bob", extra: 1 }],
    {
      store: false,
      reasoning_effort: "medium",
      metadata: { a: "b" },
      parallel_tool_calls: true,
      seed: 7,
      tools: [{ type: "function", function: { name: "f", strict: true }, strict: false }],
    },
  ));
  assert.deepEqual(req.messages, [{ role: "user", content: "hi" }]);
  assert.deepEqual(req.tools[0].raw, {
    type: "function",
    function: { name: "f", strict: true },
    strict: false,
  });
});

/** Asserts that the body is rejected with an `InvalidRequestError` whose message matches. */
function assertRejected(bad: unknown, message: RegExp) {
  assert.throws(() => toCanonicalRequest(bad), (err: unknown) => {
    assert.ok(err instanceof InvalidRequestError, `expected InvalidRequestError, got ${err}`);
    assert.match(err.message, message);
    return true;
  });
}

Deno.test("bad input is rejected naming the field", () => {
  const user = { role: "user", content: "hi" };
  assertRejected("hello", /body: .*expected object/);
  assertRejected(null, /body: .*expected object/);
  assertRejected([user], /body: .*expected object/);
  assertRejected({ model: "m" }, /messages: .*expected array/);
  assertRejected({ model: "m", messages: "hi" }, /messages: .*expected array/);
  assertRejected(body([]), /messages: Too small/);
  assertRejected({ messages: [user] }, /model: .*expected string/);
  assertRejected(body([user, { role: "robot", content: "x" }]), /messages\[1\]\.role:/);
  assertRejected(body([{ role: "tool", content: "out" }]), /messages\[0\]\.tool_call_id:/);
  assertRejected(
    body([{ role: "user", content: 5 }]),
    /messages\[0\]\.content: Invalid input: expected string or null or array/,
  );
  assertRejected(body([{ role: "user", content: [{ type: "text" }] }]), /content\[0\]\.text:/);
  assertRejected(
    body([{ role: "assistant", content: "", tool_calls: [{ id: "c", type: "function" }] }]),
    /messages\[0\]\.tool_calls\[0\]\.function:/,
  );
  assertRejected(body([user], { tools: [{ type: "function" }] }), /tools\[0\]\.function:/);
  assertRejected(body([user], { tools: [{ type: "custom" }] }), /tools\[0\]\.custom:/);
  assertRejected(body([user], { temperature: "hot" }), /temperature:/);
  assertRejected(body([user], { max_completion_tokens: 0 }), /max_completion_tokens:/);
  assertRejected(body([user], { stop: [1] }), /stop/);
  assertRejected(body([user], { stream: "yes" }), /stream:/);
});
