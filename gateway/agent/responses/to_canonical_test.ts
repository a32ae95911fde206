import assert from "node:assert/strict";
import { InvalidRequestError } from "../../protocol.ts";
import { loadCodexRecords } from "./__fixtures__/codex.ts";
import { CUSTOM_TOOL_PARAMETERS, toCanonicalRequest } from "./to_canonical.ts";
import { fixtureImage } from "../../../tests/support/image_files.ts";

const [first, second] = loadCodexRecords();
const WEBP = await fixtureImage("lossy-512x288.webp");

/** A minimal valid body around the given input items. */
const withInput = (input: unknown, extra: Record<string, unknown> = {}) => ({
  model: "m",
  input,
  ...extra,
});

Deno.test("fixture request 1: developer items become system, context and prompt become user", () => {
  const req = toCanonicalRequest(first.body);
  assert.equal(req.protocol, "responses");
  assert.equal(req.model, "policy-model-v1");
  assert.equal(req.stream, true);
  assert.deepEqual(req.sampling, {});
  assert.deepEqual(req.messages.map((m) => m.role), ["system", "system", "user", "user"]);
  assert.match(req.messages[0].content, /^You are a coding agent running in the Codex CLI/);
  assert.equal(req.messages[0].content, first.body.input[0].content[0].text);
  assert.match(req.messages[1].content, /^<skills_instructions>/);
  assert.match(req.messages[2].content, /^<environment_context>\n {2}<cwd><workdir><\/cwd>/);
  assert.equal(req.messages[3].content, "Create probe.txt then list files");
});

Deno.test("fixture request 2: one assistant message per turn, then the tool result", () => {
  const reasoningItem = second.body.input[4];
  assert.equal(reasoningItem.content, null, "the fixture echoes content:null on reasoning");
  const call = second.body.input[6];

  const req = toCanonicalRequest(second.body);
  assert.equal(req.messages.length, 6);
  assert.deepEqual(req.messages.slice(0, 4), toCanonicalRequest(first.body).messages);
  assert.deepEqual(req.messages[4], {
    role: "assistant",
    content: "I will run a command.",
    reasoning_content: "I should run a command.",
    tool_calls: [{
      id: "call_d6b6c9d5d6271d050a95cfc9",
      name: "exec_command",
      arguments: '{"cmd":"echo probe-ok > probe.txt && ls -a"}',
    }],
  });
  assert.equal(call.call_id, "call_d6b6c9d5d6271d050a95cfc9");
  assert.equal(call.arguments, '{"cmd":"echo probe-ok > probe.txt && ls -a"}');
  assert.deepEqual(req.messages[5], {
    role: "tool",
    tool_call_id: "call_d6b6c9d5d6271d050a95cfc9",
    content: second.body.input[7].output,
  });
  assert.match(req.messages[5].content, /^Chunk ID: 3b9e83\n.*Output:\n\.\n\.\.\n\.git\n/s);
});

Deno.test("fixture tools: functions converted, namespace flattened, unknown types dropped", () => {
  const body = structuredClone(first.body);
  body.tools.push(
    { type: "tool_search", execution: "client", description: "find tools" },
    { type: "web_search" },
    { type: "local_shell" },
  );
  const tools = toCanonicalRequest(body).tools;
  assert.deepEqual(tools.map((t) => t.name), [
    "exec_command",
    "write_stdin",
    "request_user_input",
    "view_image",
    "close_agent",
    "resume_agent",
    "send_input",
    "spawn_agent",
    "wait_agent",
    "get_goal",
    "create_goal",
    "update_goal",
  ]);
  assert.ok(tools.every((t) => t.kind === "function"));
  const exec = body.tools[0];
  assert.deepEqual(tools[0], {
    name: "exec_command",
    description: exec.description,
    parameters: exec.parameters,
    kind: "function",
    raw: exec,
  });
  const spawn = body.tools[4].tools.find((t: { name: string }) => t.name === "spawn_agent");
  assert.deepEqual(tools.find((t) => t.name === "spawn_agent")?.parameters, spawn.parameters);
});

Deno.test("custom tools get a single string input", () => {
  const patch = {
    type: "custom",
    name: "apply_patch",
    description: "Apply a patch",
    format: { type: "grammar", syntax: "lark", definition: "start: ..." },
  };
  const req = toCanonicalRequest(withInput("hi", { tools: [patch] }));
  assert.deepEqual(req.tools, [{
    name: "apply_patch",
    description: "Apply a patch",
    parameters: CUSTOM_TOOL_PARAMETERS,
    kind: "custom",
    raw: patch,
  }]);
});

Deno.test("reordered keys and dropped status/id on echoed items convert identically", () => {
  const echoed = structuredClone(second.body);
  echoed.input = echoed.input.map((item: Record<string, unknown>) => {
    const { status: _status, id: _id, ...rest } = item;
    return Object.fromEntries(Object.entries(rest).reverse());
  });
  echoed.client_metadata = Object.fromEntries(Object.entries(echoed.client_metadata).reverse());
  assert.notDeepEqual(Object.keys(echoed.input[6]), Object.keys(second.body.input[6]));
  assert.deepEqual(toCanonicalRequest(echoed), toCanonicalRequest(second.body));
});

Deno.test("instructions, string input, sampling and stream default", () => {
  const req = toCanonicalRequest({
    model: "m",
    instructions: "Be brief.",
    input: "Hello",
    max_output_tokens: 256,
    temperature: 0.7,
    top_p: 0.9,
  });
  assert.deepEqual(req, {
    protocol: "responses",
    model: "m",
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello" }],
    tools: [],
    sampling: { max_tokens: 256, temperature: 0.7, top_p: 0.9 },
    stream: false,
  });
});

Deno.test("message content parts: text, images; system roles stay in place", () => {
  const req = toCanonicalRequest(withInput([
    { role: "user", content: "first" },
    { role: "system", content: [{ type: "input_text", text: "mid system" }] },
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "look:" },
        { type: "input_image", image_url: WEBP.dataUrl, detail: "auto" },
        { type: "input_file", file_id: "file_1" },
        { type: "text", text: "end" },
        { type: "audio_from_the_future", data: "?" },
      ],
    },
    { type: "function_call", call_id: "call_1", name: "view_image", arguments: "{}" },
    {
      type: "function_call_output",
      call_id: "call_1",
      output: [{ type: "input_image", image_url: WEBP.dataUrl }],
    },
  ]));
  assert.deepEqual(req.messages, [
    { role: "user", content: "first" },
    { role: "system", content: "mid system" },
    { role: "user", content: "look:[file]\nend", images: [{ at: 5, image: WEBP.ref }] },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "call_1", name: "view_image", arguments: "{}" }],
    },
    { role: "tool", tool_call_id: "call_1", content: "", images: [{ at: 0, image: WEBP.ref }] },
  ]);
  assert.deepEqual([...req.images!.keys()], [WEBP.ref.hash]);
});

Deno.test("images: remote URLs, file ids and images in a system message are 400s", () => {
  const user = (part: unknown, role = "user") => withInput([{ role, content: [part] }]);
  for (
    const [b, pattern] of [
      [user({ type: "input_image", image_url: "https://x/y.png" }), /does not fetch remote/],
      [user({ type: "input_image", file_id: "file_9" }), /remote images \(file file_9\)/],
      [user({ type: "input_image", image_url: WEBP.dataUrl }, "developer"), /user messages/],
    ] as const
  ) {
    assert.throws(() => toCanonicalRequest(b), (e: Error) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.match(e.message, /^input\[0\]\.content\[0\]/);
      assert.match(e.message, pattern);
      return true;
    });
  }
});

Deno.test("assistant-side items group into one message per run", () => {
  const req = toCanonicalRequest(withInput([
    { role: "user", content: "go" },
    { type: "reasoning", summary: [{ type: "summary_text", text: "plan A" }] },
    { type: "function_call", call_id: "call_1", name: "f", arguments: '{ "a": 1 }' },
    { type: "web_search_call", id: "ws_1", status: "completed" },
    { type: "custom_tool_call", call_id: "call_2", name: "apply_patch", input: "*** Begin" },
    { type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "plan B" }] },
    {
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "part 1" }, { type: "refusal", refusal: "no" }],
    },
    { role: "assistant", content: "second message" },
    { type: "reasoning", summary: [] },
    { type: "function_call_output", call_id: "call_1", output: "ok" },
    {
      type: "custom_tool_call_output",
      call_id: "call_2",
      output: [{ type: "input_text", text: "patched" }],
    },
  ]));
  assert.deepEqual(req.messages, [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: "",
      reasoning_content: "plan A",
      tool_calls: [
        { id: "call_1", name: "f", arguments: '{ "a": 1 }' },
        {
          id: "call_2",
          name: "apply_patch",
          arguments: JSON.stringify({ input: "*** Begin" }),
          kind: "custom",
        },
      ],
    },
    { role: "assistant", content: "part 1\nno", reasoning_content: "plan B" },
    { role: "assistant", content: "second message" },
    // A reasoning item always opens a new turn, even one with no text to show.
    { role: "assistant", content: "" },
    { role: "tool", tool_call_id: "call_1", content: "ok" },
    { role: "tool", tool_call_id: "call_2", content: "patched" },
  ]);
});

Deno.test("a reasoning item after reasoning starts a new turn; a user message closes one", () => {
  const req = toCanonicalRequest(withInput([
    { type: "reasoning", summary: [{ type: "summary_text", text: "r1" }] },
    { type: "reasoning", summary: [{ type: "summary_text", text: "r2" }] },
    { role: "user", content: "u" },
    { type: "function_call", call_id: "call_3", name: "g", arguments: "{}" },
  ]));
  assert.deepEqual(req.messages, [
    { role: "assistant", content: "", reasoning_content: "r1" },
    { role: "assistant", content: "", reasoning_content: "r2" },
    { role: "user", content: "u" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "call_3", name: "g", arguments: "{}" }],
    },
  ]);
});

Deno.test("unknown top-level fields, item types and tool types are accepted", () => {
  const req = toCanonicalRequest(withInput([
    { type: "item_reference", id: "msg_old" },
    { role: "user", content: "hi", id: "msg_1", status: "completed", phase: "final" },
  ], {
    store: false,
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: "abc",
    client_metadata: { any: "thing" },
    parallel_tool_calls: true,
    reasoning: { effort: "medium", summary: "auto" },
    text: { verbosity: "low" },
    future_field: { nested: [1, 2] },
    tools: [{ type: "mcp", server_label: "x" }],
  }));
  assert.deepEqual(req.messages, [{ role: "user", content: "hi" }]);
  assert.deepEqual(req.tools, []);
});

const badBodies: [string, unknown, RegExp][] = [
  ["missing input", { model: "m" }, /input: expected a string or an array/],
  ["input of the wrong type", { model: "m", input: 42 }, /input: expected a string or an array/],
  ["missing model", { input: "hi" }, /model: .*expected string/],
  ["message without role", withInput([{ content: "x" }]), /input\[0\]\.role/],
  ["unknown role", withInput([{ role: "robot", content: "x" }]), /input\[0\]\.role/],
  [
    "function_call_output without call_id",
    withInput([{ role: "user", content: "x" }, { type: "function_call_output", output: "ok" }]),
    /input\[1\]\.call_id: .*expected string, received undefined/,
  ],
  [
    "function_call with object arguments",
    withInput([{ type: "function_call", call_id: "c", name: "f", arguments: { a: 1 } }]),
    /input\[0\]\.arguments: .*expected string/,
  ],
  [
    "text part without text",
    withInput([{ role: "user", content: [{ type: "input_text" }] }]),
    /input\[0\]\.content\[0\]\.text/,
  ],
  ["item that is not an object", withInput(["hello"]), /input\[0\]: expected an input item object/],
  [
    "function tool without name",
    withInput("x", { tools: [{ type: "function" }] }),
    /tools\[0\]\.name/,
  ],
  ["stream not boolean", withInput("x", { stream: "yes" }), /stream: .*expected boolean/],
  ["max_output_tokens not positive", withInput("x", { max_output_tokens: 0 }), /max_output_tokens/],
  ["body not an object", null, /body: .*expected object/],
];

for (const [name, body, message] of badBodies) {
  Deno.test(`invalid request: ${name}`, () => {
    assert.throws(() => toCanonicalRequest(body), (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError, `got ${error}`);
      assert.match(error.message, message);
      return true;
    });
  });
}
