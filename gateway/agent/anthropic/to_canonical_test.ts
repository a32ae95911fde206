import assert from "node:assert/strict";
import { fixtureImage } from "../../../tests/support/image_files.ts";
import type { AssistantMessage } from "../../../canonical/mod.ts";
import { InvalidRequestError } from "../../protocol.ts";
import { loadCapture } from "./__fixtures__/load.ts";
import { toCanonicalCountTokensRequest, toCanonicalRequest } from "./to_canonical.ts";

const PNG = await fixtureImage();

const MAIN_PROMPT_START = "You are an agent working with the user toward their goals";

Deno.test("fixture request 1: system prompt, first user message, tools, sampling", () => {
  const [record] = loadCapture();
  const req = toCanonicalRequest(record.body);
  assert.equal(req.protocol, "anthropic");
  assert.equal(req.model, "claude-sonnet-4-5");
  assert.equal(req.stream, true);
  assert.deepEqual(req.sampling, { max_tokens: 32000 });

  assert.deepEqual(req.messages.map((m) => m.role), ["system", "user"]);
  const system = req.messages[0].content;
  assert.ok(system.startsWith("You are a Claude agent, built on Anthropic's Claude Agent SDK.\n"));
  assert.ok(system.includes(MAIN_PROMPT_START));
  // deno-lint-ignore no-explicit-any
  assert.equal(system, record.body.system.map((b: any) => b.text).join("\n"));

  // deno-lint-ignore no-explicit-any
  const userTexts = record.body.messages[0].content.map((b: any) => b.text);
  assert.equal(req.messages[1].content, userTexts.join("\n"));
  assert.ok(req.messages[1].content.includes("Create probe.txt then list files"));

  assert.equal(req.tools.length, record.body.tools.length); // no server tools to drop
  assert.deepEqual(
    req.tools.map((t) => t.name),
    // deno-lint-ignore no-explicit-any
    record.body.tools.map((t: any) => t.name),
  );
  const bash = req.tools.find((t) => t.name === "Bash")!;
  assert.equal(bash.kind, "function");
  assert.deepEqual(bash.parameters, record.body.tools[1].input_schema);
  assert.ok(bash.description?.startsWith("Executes a given bash command"));
  const deferred = req.tools.find((t) => t.name === "DeferredToolPlaceholder")!;
  assert.equal((deferred.raw as Record<string, unknown>).defer_loading, true);
});

Deno.test("fixture request 2: assistant echo, tool result, no trailing user message", () => {
  const [, record] = loadCapture();
  const req = toCanonicalRequest(record.body);
  assert.deepEqual(req.messages.map((m) => m.role), ["system", "user", "assistant", "tool"]);

  const echo = record.body.messages[1].content;
  const assistant = req.messages[2] as AssistantMessage;
  assert.equal(assistant.reasoning_content, "I should run a command.");
  assert.equal(assistant.content, "I will run a command.");
  assert.equal(assistant.tool_calls?.length, 1);
  const call = assistant.tool_calls![0];
  assert.equal(call.id, "toolu_ebda01fd88eb80b2889551c9");
  assert.equal(call.name, "Bash");
  assert.deepEqual(JSON.parse(call.arguments), echo[2].input);
  assert.equal(call.arguments, JSON.stringify(echo[2].input)); // key order kept

  const toolResult = record.body.messages[2].content[0];
  assert.deepEqual(req.messages[3], {
    role: "tool",
    tool_call_id: "toolu_ebda01fd88eb80b2889551c9",
    content: toolResult.content,
  });
  assert.ok(req.messages[3].content.startsWith(".\n..\n.git\nREADME.md\nprobe.txt"));
});

Deno.test("fixture request 2 repeats request 1 although cache_control moved", () => {
  const [first, second] = loadCapture();
  // The recording really moved it: request 1's last user block had it, request 2's does not.
  assert.ok(first.body.messages[0].content.at(-1).cache_control);
  assert.equal(second.body.messages[0].content.at(-1).cache_control, undefined);
  const a = toCanonicalRequest(first.body);
  const b = toCanonicalRequest(second.body);
  assert.deepEqual(b.messages.slice(0, a.messages.length), a.messages);
  assert.deepEqual(b.tools, a.tools);
});

/** Applies `edit` to every block and tool that can carry `cache_control`. */
// deno-lint-ignore no-explicit-any
function everyCacheable(body: any, edit: (o: Record<string, unknown>) => void): void {
  for (const block of body.system) edit(block);
  for (const tool of body.tools) edit(tool);
  for (const message of body.messages) {
    for (const block of message.content) {
      edit(block);
      if (Array.isArray(block.content)) block.content.forEach(edit);
    }
  }
}

Deno.test("removing or adding cache_control everywhere gives the same canonical request", () => {
  const [, record] = loadCapture();
  const expected = toCanonicalRequest(record.body);

  const removed = structuredClone(record.body);
  everyCacheable(removed, (o) => delete o.cache_control);
  assert.ok(!JSON.stringify(removed).includes("cache_control"));
  assert.deepEqual(toCanonicalRequest(removed), expected);

  const added = structuredClone(record.body);
  everyCacheable(added, (o) => o.cache_control = { type: "ephemeral", ttl: "1h" });
  assert.deepEqual(toCanonicalRequest(added), expected);
});

Deno.test("billing header system block is dropped", () => {
  const [record] = loadCapture();
  const withHeader = structuredClone(record.body);
  withHeader.system.unshift({
    type: "text",
    text: "x-anthropic-billing-header: cc_version=2.1.330.9db; cc_entrypoint=sdk-cli;",
  });
  const req = toCanonicalRequest(withHeader);
  assert.ok(!req.messages[0].content.includes("x-anthropic-billing-header"));
  assert.deepEqual(req, toCanonicalRequest(record.body));
});

function body(messages: unknown[], extra: Record<string, unknown> = {}) {
  return { model: "m", max_tokens: 100, messages, ...extra };
}

Deno.test("string content equals a single text block (user and mid-conversation system)", () => {
  const asString = toCanonicalRequest(body([
    { role: "user", content: "hi" },
    { role: "system", content: "# Environment" },
  ]));
  const asBlocks = toCanonicalRequest(body([
    { role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] },
    { role: "system", content: [{ type: "text", text: "# Environment" }] },
  ]));
  assert.deepEqual(asBlocks, asString);
  assert.deepEqual(asString.messages, [
    { role: "user", content: "hi" },
    { role: "system", content: "# Environment" },
  ]);
});

Deno.test("system: string, empty, and role:system kept in place", () => {
  const req = toCanonicalRequest(body([
    { role: "user", content: "a" },
    { role: "system", content: "ctx" },
    { role: "assistant", content: "b" },
  ], { system: "sys" }));
  assert.deepEqual(req.messages.map((m) => [m.role, m.content]), [
    ["system", "sys"],
    ["user", "a"],
    ["system", "ctx"],
    ["assistant", "b"],
  ]);
  assert.equal(toCanonicalRequest(body([], { system: [] })).messages.length, 0);
  assert.equal(toCanonicalRequest(body([], { system: "" })).messages.length, 0);
});

Deno.test("user blocks: tool results first, then text; images are parts, documents placeholders", () => {
  const req = toCanonicalRequest(body([{
    role: "user",
    content: [
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG.base64 } },
      { type: "tool_result", tool_use_id: "toolu_1", content: "out", is_error: true },
      { type: "document", source: { type: "text", data: "x" } },
      {
        type: "tool_result",
        tool_use_id: "toolu_2",
        content: [{ type: "text", text: "a" }, {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: PNG.base64 },
        }, { type: "text", text: "b" }],
      },
      { type: "tool_result", tool_use_id: "toolu_3" },
    ],
  }]));
  assert.deepEqual(req.messages, [
    { role: "tool", tool_call_id: "toolu_1", content: "out" },
    { role: "tool", tool_call_id: "toolu_2", content: "ab", images: [{ at: 1, image: PNG.ref }] },
    { role: "tool", tool_call_id: "toolu_3", content: "" },
    { role: "user", content: "look[document]", images: [{ at: 4, image: PNG.ref }] },
  ]);
  // The bytes once, by hash, for the store; the messages hold only the reference.
  assert.deepEqual([...req.images!.keys()], [PNG.ref.hash]);
  assert.deepEqual(req.images!.get(PNG.ref.hash), { ref: PNG.ref, bytes: PNG.bytes });
});

Deno.test("recorded Claude Code: the PNG it read is an image part of the tool result", () => {
  const [first, read, fallback] = Deno.readTextFileSync(
    new URL("./__fixtures__/claude-code-2.1.330.read-image.jsonl", import.meta.url),
  ).split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l));
  assert.equal(toCanonicalRequest(first.body).images, undefined);
  const req = toCanonicalRequest(read.body);
  const tool = req.messages[req.messages.length - 1];
  assert.equal(tool.role, "tool");
  assert.deepEqual(tool, {
    role: "tool",
    tool_call_id: read.body.messages[1].content[1].id,
    content: "",
    images: [{ at: 0, image: PNG.ref }],
  });
  assert.deepEqual(req.images!.get(PNG.ref.hash)!.bytes, PNG.bytes, "the file's bytes, as read");
  // Its fallback retry puts a system reminder after the image: text after it, the same image.
  const again = toCanonicalRequest(fallback.body);
  const last = again.messages[again.messages.length - 1];
  assert.equal(last.role, "tool");
  assert.deepEqual(last.role === "tool" && last.images, [{ at: 0, image: PNG.ref }]);
  assert.match(last.content, /^<system-reminder>/);
});

Deno.test("images: a url or file source, bad data and a non-image are 400s naming the block", () => {
  const image = (source: unknown) =>
    body([{ role: "user", content: [{ type: "text", text: "x" }, { type: "image", source }] }]);
  const refused = (source: unknown, pattern: RegExp) =>
    assert.throws(() => toCanonicalRequest(image(source)), (e: Error) => {
      assert.ok(e instanceof InvalidRequestError, e.message);
      assert.match(e.message, /^messages\[0\]\.content\[1\]/);
      assert.match(e.message, pattern);
      return true;
    });
  refused({ type: "url", url: "https://example.com/cat.png" }, /does not fetch remote images/);
  refused({ type: "file", file_id: "file_011" }, /does not fetch remote images \(file file_011\)/);
  refused({ type: "base64", media_type: "image/png", data: "not base64!" }, /not base64/);
  refused({ type: "base64", media_type: "image/png", data: btoa("GIF") }, /not a PNG, JPEG/);
  refused({ type: "base64", media_type: "image/png" }, /needs its data/);
  refused({ type: "weird" }, /is not base64, url or file/);
  assert.throws(() => toCanonicalRequest(image(undefined)), /source/);
});

Deno.test("assistant: string content, several thinking blocks, redacted thinking, no extra keys", () => {
  const req = toCanonicalRequest(body([
    { role: "assistant", content: "plain" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "one", signature: "s1" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Hel" },
        { type: "thinking", thinking: "two", signature: "s2" },
        { type: "text", text: "lo" },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "only text" }] },
  ]));
  assert.deepEqual(req.messages, [
    { role: "assistant", content: "plain" },
    { role: "assistant", content: "Hello", reasoning_content: "one\ntwo" },
    { role: "assistant", content: "only text" },
  ]);
  assert.ok(!("reasoning_content" in req.messages[2]));
  assert.ok(!("tool_calls" in req.messages[2]));
});

Deno.test("tools: server tools dropped, custom and plain tools kept", () => {
  const schema = { type: "object", properties: { q: { type: "string" } } };
  const req = toCanonicalRequest(body([{ role: "user", content: "x" }], {
    tools: [
      { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      { type: "custom", name: "Search", input_schema: schema, eager_input_streaming: true },
      { name: "Plain", description: "d", input_schema: schema, cache_control: { type: "x" } },
    ],
  }));
  assert.deepEqual(req.tools, [
    {
      name: "Search",
      kind: "function",
      parameters: schema,
      raw: { type: "custom", name: "Search", input_schema: schema, eager_input_streaming: true },
    },
    {
      name: "Plain",
      description: "d",
      kind: "function",
      parameters: schema,
      raw: { name: "Plain", description: "d", input_schema: schema },
    },
  ]);
});

Deno.test("sampling parameters and stream default", () => {
  const req = toCanonicalRequest(body([], {
    temperature: 0.7,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ["END"],
  }));
  assert.deepEqual(req.sampling, { max_tokens: 100, temperature: 0.7, top_p: 0.9, stop: ["END"] });
  assert.equal(req.stream, false);
  assert.equal(toCanonicalRequest(body([], { stream: true })).stream, true);
});

Deno.test("count_tokens: max_tokens optional, stream always false", () => {
  const req = toCanonicalCountTokensRequest({
    model: "m",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
  });
  assert.deepEqual(req.sampling, {});
  assert.equal(req.stream, false);
  assert.deepEqual(req.messages, [{ role: "user", content: "hi" }]);
  assert.throws(
    () => toCanonicalRequest({ model: "m", messages: [] }),
    (e) => e instanceof InvalidRequestError && /^max_tokens: /.test(e.message),
  );
});

Deno.test("unknown fields and unknown block types are accepted and ignored", () => {
  const req = toCanonicalRequest(body([
    {
      role: "user",
      content: [
        { type: "search_result", source: "s", title: "t", content: [] },
        { type: "text", text: "q", citations: null },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "text", text: "a" },
      ],
    },
    { role: "user", content: [{ type: "container_upload", file_id: "f" }] },
  ], {
    metadata: { user_id: "{}" },
    thinking: { type: "adaptive", display: "updates" },
    output_config: { effort: "high" },
    context_management: { edits: [] },
    brand_new_field: [1, 2],
  }));
  assert.deepEqual(req.messages, [
    { role: "user", content: "q" },
    { role: "assistant", content: "a" },
    { role: "user", content: "" },
  ]);
});

function rejects(input: unknown, pattern: RegExp): void {
  assert.throws(() => toCanonicalRequest(input), (e) => {
    assert.ok(e instanceof InvalidRequestError, `not an InvalidRequestError: ${e}`);
    assert.match(e.message, pattern);
    return true;
  });
}

Deno.test("invalid bodies throw InvalidRequestError naming the field", () => {
  for (const bad of [null, [], "text", 5]) rejects(bad, /JSON object/);
  rejects({ model: "m", max_tokens: 1 }, /^messages: .*expected array/);
  rejects({ messages: [], max_tokens: 1 }, /^model: /);
  rejects(body([{ content: "x" }]), /^messages\[0\]\.role: /);
  rejects(body([{ role: "tool", content: "x" }]), /^messages\[0\]\.role: .*"assistant"/);
  rejects(body([{ role: "user" }]), /^messages\[0\]\.content: .*expected string or array/);
  rejects({ ...body([]), max_tokens: "100" }, /^max_tokens: .*expected number/);
  rejects({ ...body([]), temperature: "hot" }, /^temperature: /);
  rejects({ ...body([]), stream: "yes" }, /^stream: /);
  rejects(
    body([{ role: "user", content: [{ type: "text", text: 5 }] }]),
    /^messages\[0\]\.content\[0\]\.text: .*expected string/,
  );
  rejects(
    body([{ role: "user", content: [{ text: "no type" }] }]),
    /^messages\[0\]\.content\[0\]\.type: /,
  );
  rejects(
    body([{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "n", input: "{}" }] }]),
    /^messages\[0\]\.content\[0\]\.input: /,
  );
  rejects(
    body([{
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text" }] }],
    }]),
    /^messages\[0\]\.content\[0\]\.content\[0\]\.text: /,
  );
  rejects(body([], { system: [{ type: "image" }] }), /^system\[0\]\./);
  rejects(body([], { tools: [{ description: "no name" }] }), /^tools\[0\]\.name: /);
});
