import assert from "node:assert/strict";
import { InvalidRequestError } from "../../protocol.ts";
import { callOf, loadGeminiSession } from "./__fixtures__/gemini_cli.ts";
import { geminiCall } from "./gemini_call.ts";
import { toGenerateContentResponse } from "./response.ts";
import { thoughtSignature } from "./thought_signature.ts";
import { answerFromRecord } from "./__fixtures__/gemini_cli.ts";
import { toCanonicalCountTokensRequest, toCanonicalRequest } from "./to_canonical.ts";
import { fixtureImage } from "../../../tests/support/image_files.ts";

const [first, second] = loadGeminiSession();
const PNG = await fixtureImage();
const JPEG = await fixtureImage("progressive-1001x333.jpg");
const url = (path: string) => new URL(path, "http://127.0.0.1");
const call = (body: unknown, method = "generateContent") =>
  geminiCall(url(`/v1beta/models/m:${method}`), body);
const user = (text: string) => ({ role: "user", parts: [{ text }] });

Deno.test("fixture request 1: the system instruction, the context and the prompt, 15 tools", () => {
  const req = toCanonicalRequest(callOf(first));
  assert.equal(req.protocol, "gemini");
  assert.equal(req.model, "policy-model-v1");
  assert.equal(req.stream, true);
  assert.deepEqual(req.sampling, { temperature: 1, top_p: 0.95 });
  assert.deepEqual(req.messages.map((m) => m.role), ["system", "user"]);
  assert.match(req.messages[0].content, /^You are Gemini CLI, an autonomous CLI agent/);
  assert.equal(req.messages[0].content, first.body.systemInstruction.parts[0].text);
  const [context, prompt] = first.body.contents[0].parts.map((p: { text: string }) => p.text);
  assert.equal(req.messages[1].content, `${context}\n${prompt}`);
  assert.match(req.messages[1].content, /^<session_context>\n.*<\/session_context>\nCreate probe/s);

  assert.equal(req.tools.length, 15);
  const shell = req.tools.find((t) => t.name === "run_shell_command")!;
  const declared = first.body.tools[0].functionDeclarations.find((d: { name: string }) =>
    d.name === "run_shell_command"
  );
  assert.deepEqual(shell, {
    name: "run_shell_command",
    kind: "function",
    raw: declared,
    description: declared.description,
    parameters: declared.parametersJsonSchema,
  });
});

Deno.test("fixture request 2: the call without its thought part, then the shell's output", () => {
  const model = second.body.contents[1];
  assert.ok(!model.parts.some((p: { thought?: boolean }) => p.thought), "thoughts dropped");
  assert.match(model.parts[1].thoughtSignature, /^fakesig_/, "the signature kept, verbatim");
  const req = toCanonicalRequest(callOf(second));
  assert.deepEqual(req.messages.slice(0, 2), toCanonicalRequest(callOf(first)).messages);
  const id = model.parts[1].functionCall.id;
  // The recording's signature is not the gateway's: no reasoning comes back with it.
  assert.deepEqual(req.messages[2], {
    role: "assistant",
    content: "I will run a command.",
    tool_calls: [{
      id,
      name: "run_shell_command",
      arguments: '{"command":"echo probe-ok > probe.txt && ls -a"}',
    }],
  });
  assert.equal(req.messages[3].role, "tool");
  assert.deepEqual({ ...req.messages[3], content: "" }, {
    role: "tool",
    tool_call_id: id,
    name: "run_shell_command",
    content: "",
  });
  assert.match(
    req.messages[3].content,
    /^<untrusted_context>\nOutput: \.\n\.\.\n\.git\nREADME\.md\nprobe\.txt\nProcess Group PGID: \d+\n<\/untrusted_context>$/,
  );
});

Deno.test("fixture request 2 with the gateway's signature: the reasoning comes back", () => {
  const answer = answerFromRecord(first);
  const ours = toGenerateContentResponse(answer).candidates[0].content.parts;
  const signature = ours.find((p) => p.thoughtSignature)!.thoughtSignature!;
  assert.equal(signature, thoughtSignature(answer.id, "I should run a command."));
  const body = structuredClone(second.body);
  body.contents[1].parts[1].thoughtSignature = signature;
  const req = toCanonicalRequest(callOf({ ...second, body }));
  assert.deepEqual(req.messages[2], { ...answer.message, content: "I will run a command." });
  // On the text part instead (where the gateway puts it), the same.
  delete body.contents[1].parts[1].thoughtSignature;
  body.contents[1].parts[0].thoughtSignature = signature;
  assert.deepEqual(toCanonicalRequest(callOf({ ...second, body })).messages[2], answer.message);
});

Deno.test("model content: thought parts are the reasoning, pieces concatenate, ids verbatim", () => {
  const req = toCanonicalRequest(call({
    contents: [user("go"), {
      role: "model",
      parts: [
        { text: "I should", thought: true },
        { text: " look.", thought: true, thoughtSignature: thoughtSignature("t", "other") },
        { text: "Looking" },
        { text: " now." },
        { functionCall: { id: "call_1", name: "ls", args: { path: ".", deep: { a: [1] } } } },
        { functionCall: { name: "noop" } },
      ],
    }],
  }));
  assert.deepEqual(req.messages[1], {
    role: "assistant",
    content: "Looking now.",
    reasoning_content: "I should look.",
    tool_calls: [
      { id: "call_1", name: "ls", arguments: '{"path":".","deep":{"a":[1]}}' },
      { id: "", name: "noop", arguments: "{}" },
    ],
  });
  // Foreign signatures carry nothing.
  const foreign = toCanonicalRequest(call({
    contents: [user("go"), {
      role: "model",
      parts: [{ text: "x", thoughtSignature: "skip_thought_signature_validator" }, {
        text: "y",
        thoughtSignature: btoa("not ours\nreasoning"),
      }],
    }],
  }));
  assert.deepEqual(foreign.messages[1], { role: "assistant", content: "xy" });
});

Deno.test("user content: tool results first, images, media placeholders, JSON responses, function role", () => {
  const req = toCanonicalRequest(call({
    contents: [
      user("go"),
      { role: "model", parts: [{ functionCall: { id: "a", name: "read", args: {} } }] },
      {
        role: "user",
        parts: [
          { text: "and look at this" },
          { inlineData: { mimeType: "image/png", data: PNG.base64 } },
          { fileData: { mimeType: "application/pdf", fileUri: "gs://x" } },
          {
            functionResponse: {
              id: "a",
              name: "read",
              response: { error: "no such file" },
              parts: [{ inlineData: { mimeType: "image/jpeg", data: JPEG.base64 } }],
            },
          },
        ],
      },
      { role: "function", parts: [{ functionResponse: { name: "read", response: {} } }] },
      { parts: [{ text: "no role is user" }] },
    ],
  }));
  assert.deepEqual(req.messages.slice(2), [
    {
      role: "tool",
      tool_call_id: "a",
      name: "read",
      content: '{"error":"no such file"}',
      images: [{ at: 24, image: JPEG.ref }],
    },
    { role: "user", content: "and look at this[file]", images: [{ at: 16, image: PNG.ref }] },
    { role: "tool", tool_call_id: "", name: "read", content: "" },
    { role: "user", content: "no role is user" },
  ]);
});

Deno.test("images: by reference, without data, or not an image are 400s naming the part", () => {
  const parts = (part: unknown) => call({ contents: [{ role: "user", parts: [part] }] });
  for (
    const [b, pattern] of [
      [
        parts({ fileData: { mimeType: "image/png", fileUri: "gs://b/c.png" } }),
        /fileData: the gateway does not fetch remote images \(gs:/,
      ],
      [
        parts({ inlineData: { mimeType: "image/png" } }),
        /inlineData.data: an image blob needs its data/,
      ],
      [parts({ inlineData: { mimeType: "image/png", data: btoa("%PDF-1.7") } }), /not a PNG, JPEG/],
    ] as const
  ) {
    assert.throws(() => toCanonicalRequest(b), (e: Error) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.match(e.message, /^contents\[0\]\.parts\[0\]/);
      assert.match(e.message, pattern);
      return true;
    });
  }
  // Other media by reference stays a placeholder.
  const pdf = toCanonicalRequest(
    parts({ fileData: { mimeType: "application/pdf", fileUri: "x" } }),
  );
  assert.deepEqual(pdf.messages, [{ role: "user", content: "[file]" }]);
});

Deno.test("system, tools, sampling: string or content, server tools dropped, only what was set", () => {
  const req = toCanonicalRequest(call({
    systemInstruction: "Be brief.",
    contents: [user("hi")],
    tools: [
      { googleSearch: {} },
      { functionDeclarations: [{ name: "f", parameters: { type: "OBJECT" } }, { name: "g" }] },
      { codeExecution: {} },
    ],
    generationConfig: {
      maxOutputTokens: 99,
      temperature: 0,
      stopSequences: ["END"],
      topK: 40,
      thinkingConfig: { includeThoughts: true },
    },
    safetySettings: [{ category: "x", threshold: "BLOCK_NONE" }],
  }));
  assert.deepEqual(req.messages[0], { role: "system", content: "Be brief." });
  assert.deepEqual(req.tools, [
    {
      name: "f",
      kind: "function",
      raw: { name: "f", parameters: { type: "OBJECT" } },
      parameters: { type: "OBJECT" },
    },
    { name: "g", kind: "function", raw: { name: "g" } },
  ]);
  assert.deepEqual(req.sampling, { max_tokens: 99, temperature: 0, stop: ["END"] });
  assert.equal(req.stream, false);
  const parts = toCanonicalRequest(call({
    systemInstruction: { parts: [{ text: "a" }, { text: "b" }] },
    contents: [user("hi")],
  }));
  assert.deepEqual(parts.messages[0], { role: "system", content: "a\nb" });
});

Deno.test("invalid calls: a protocol error naming the field or the path", () => {
  const cases: [() => unknown, RegExp][] = [
    [() => toCanonicalRequest(call([1])), /JSON object/],
    [
      () => toCanonicalRequest(call({ contents: [{ role: "assistant" }] })),
      /^contents\[0\]\.role: /,
    ],
    [
      () => toCanonicalRequest(call({ contents: [{ parts: [{ functionCall: {} }] }] })),
      /functionCall\.name: /,
    ],
    [
      () =>
        toCanonicalRequest(
          call({ contents: [user("x")], generationConfig: { candidateCount: 3 } }),
        ),
      /one candidate, not 3/,
    ],
    [
      () =>
        toCanonicalRequest(call({
          contents: [{
            parts: [{ functionResponse: { name: "f", parts: [{ inlineData: { mimeType: 5 } }] } }],
          }],
        })),
      /functionResponse\.parts\[0\]\.inlineData\.mimeType: /,
    ],
    [() => geminiCall(url("/v1beta/models/m:streamGenerateContent"), {}), /add \?alt=sse/],
    [() => geminiCall(url("/v1beta/models/m"), {}), /names no model and method/],
    [() => geminiCall(url("/v1beta/models/%E0%A4%A:generateContent"), {}), /percent-encoding/],
  ];
  for (const [fn, message] of cases) {
    assert.throws(fn, (e) => e instanceof InvalidRequestError && message.test(e.message));
  }
});

Deno.test("calls: the model from the path, decoded; the stream from the method", () => {
  const c = geminiCall(
    url("/rollout/r/v1beta/models/Qwen%2FQwen3-8B:streamGenerateContent?alt=sse"),
    {},
  );
  assert.deepEqual(c, { model: "Qwen/Qwen3-8B", method: "streamGenerateContent", body: {} });
  assert.equal(geminiCall(url("/v1beta/models/a/b:countTokens"), null).model, "a/b");
});

Deno.test("countTokens: bare contents or a whole generateContentRequest", () => {
  const bare = toCanonicalCountTokensRequest(call({ contents: [user("hi")] }, "countTokens"));
  assert.deepEqual(bare.messages, [{ role: "user", content: "hi" }]);
  assert.equal(bare.stream, false);
  const whole = toCanonicalCountTokensRequest(call({
    generateContentRequest: { model: "models/m", systemInstruction: "s", contents: [user("hi")] },
  }, "countTokens"));
  assert.deepEqual(whole.messages, [{ role: "system", content: "s" }, {
    role: "user",
    content: "hi",
  }]);
  assert.deepEqual(toCanonicalCountTokensRequest(call({}, "countTokens")).messages, []);
});
