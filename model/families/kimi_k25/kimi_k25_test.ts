import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { tokenizerDoubleDir } from "../../../tests/support/tokenizer_doubles.ts";
import { streamAgainstParse } from "../../../tests/support/streamed_prefix.ts";
import { PolicyModel } from "../../policy_model.ts";
import { kimiToolDeclarations } from "./tool_declarations.ts";

// A tokenizer double: the Qwen3 vocabulary plus Kimi's special tokens, `<think>` as text.
const DIR = await tokenizerDoubleDir("kimi-k2.5");
globalThis.addEventListener("unload", () => Deno.removeSync(DIR, { recursive: true }));
const kimi = await PolicyModel.load({ dir: DIR });

Deno.test("kimi-k2.5: detected; <think> is text; reasoning kept after the last final answer", async () => {
  assert.equal(kimi.family, "kimi-k2.5");
  assert.equal(kimi.tokenizer.addedTokens.has("<think>"), false);
  const messages: Message[] = [
    { role: "user", content: "a" },
    { role: "assistant", content: "done", reasoning_content: "old" },
    { role: "user", content: "b" },
    {
      role: "assistant",
      content: "",
      reasoning_content: "new",
      tool_calls: [{ id: "functions.bash:0", name: "bash", arguments: '{"c": 1}' }],
    },
    { role: "tool", content: "out", tool_call_id: "functions.bash:0", name: "bash" },
  ];
  assert.equal(
    (await kimi.renderFull(messages, [])).text,
    "<|im_user|>user<|im_middle|>a<|im_end|><|im_assistant|>assistant<|im_middle|>" +
      "<think></think>done<|im_end|><|im_user|>user<|im_middle|>b<|im_end|>" +
      "<|im_assistant|>assistant<|im_middle|><think>new</think><|tool_calls_section_begin|>" +
      '<|tool_call_begin|>functions.bash:0<|tool_call_argument_begin|>{"c": 1}<|tool_call_end|>' +
      "<|tool_calls_section_end|><|im_end|><|im_system|>bash<|im_middle|>## Return of " +
      "functions.bash:0\nout<|im_end|><|im_assistant|>assistant<|im_middle|><think>",
  );
  const k26 = await PolicyModel.load({ dir: DIR, templateKwargs: { preserve_thinking: true } });
  assert.ok((await k26.renderFull(messages, [])).text.includes("<think>old</think>done"));
  const off = await PolicyModel.load({ dir: DIR, templateKwargs: { thinking: false } });
  assert.ok((await off.renderFull(messages, [])).text.endsWith("<think></think>"));
});

Deno.test("kimi-k2.5: TypeScript declarations (required first, comments, enums, arrays, $defs)", () => {
  const tools: ToolSpec[] = [{
    name: "edit",
    kind: "function",
    description: "Edit a file.\n\nCareful.",
    parameters: {
      type: "object",
      required: ["path"],
      additionalProperties: false,
      properties: {
        path: { type: "string", description: "Where", minLength: 1 },
        mode: { enum: ["a", "b", 3] },
        count: { type: "integer", default: 2, maximum: 9 },
        items: { type: "array", items: { type: "string", description: "one" } },
        node: { $ref: "#/$defs/Node" },
        either: { anyOf: [{ type: "string" }, { type: "null" }] },
        loose: { description: "no type" },
      },
      $defs: {
        Node: {
          type: "object",
          description: "A node",
          properties: { k: { type: ["string", "number"] } },
        },
      },
    },
  }];
  assert.equal(
    kimiToolDeclarations(tools),
    "# Tools\n\n## functions\nnamespace functions {\n" +
      "// A node\ninterface Node {\n  k?: string | number\n}\n" +
      "// Edit a file.\n\n// Careful.\n" +
      "type edit = (_: {\n" +
      "  // Where\n  // minLength: 1\n  path: string,\n" +
      "  // maximum: 9\n  // Default: 2\n  count?: number,\n" +
      "  either?: string | null,\n" +
      "  items?: Array<\n    // one\n    string\n  >,\n" +
      "  // no type\n  loose?: any,\n" +
      '  mode?: "a" | "b" | 3,\n' +
      "  node?: Node,\n" +
      "  [k: string]: never\n" +
      "}) => any;\n}\n",
  );
  assert.equal(kimiToolDeclarations([]), "");
});

Deno.test("kimi-k2.5: answers round-trip verbatim with the policy's call ids; streaming is a prefix", async () => {
  const tools: ToolSpec[] = [{ name: "bash", kind: "function", parameters: {} }];
  const message: AssistantMessage = {
    role: "assistant",
    content: "\n Running <think>\n",
    reasoning_content: " plan: ls ",
    tool_calls: [
      { id: "functions.bash:7", name: "bash", arguments: '{"c": "x</think><|tool_call_end|>"}' },
    ],
  };
  const sampled = await kimi.renderAnswerIds(message);
  const out = await kimi.parse(sampled, () => "unused", tools);
  assert.deepEqual(out.message, message);
  assert.equal(out.malformedToolCalls, 0);
  assert.ok(out.reasoningTokens > 0 && out.reasoningTokens < sampled.length);
  const { sent } = await streamAgainstParse(kimi, sampled, { chunk: () => 1, tools, label: "1" });
  assert.deepEqual(sent, { reasoning: message.reasoning_content, text: message.content });
  // Cut off while reasoning: all of it is reasoning; a section before `</think>` ends it.
  const cut = await kimi.tokenizer.encode("still thinking");
  assert.equal((await kimi.parse(cut, () => "")).message.reasoning_content, "still thinking");
  const early = await kimi.tokenizer.encode(
    "hm<|tool_calls_section_begin|><|tool_call_begin|>functions.bash:0" +
      "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
  );
  const parsed = await kimi.parse(early, () => "");
  assert.equal(parsed.message.reasoning_content, "hm");
  assert.equal(parsed.message.tool_calls?.[0].id, "functions.bash:0");
});
