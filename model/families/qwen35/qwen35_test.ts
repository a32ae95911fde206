import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { PolicyModel } from "../../policy_model.ts";
import { streamAgainstParse } from "../../../tests/support/streamed_prefix.ts";

const model = await PolicyModel.load({ family: "qwen3.5" });
const q36 = await PolicyModel.load({ family: "qwen3.6" });
const THINK = model.idOf("<think>")!, END_THINK = model.idOf("</think>")!;
const TOOL_CALL = model.idOf("<tool_call>")!, IM_END = model.endOfTurnId;

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  description: "Run a command",
  parameters: {
    type: "object",
    properties: {
      command: { type: "string" },
      timeout: { type: "number" },
      bg: { type: "boolean" },
    },
  },
}];

async function ids(...parts: (string | number)[]): Promise<number[]> {
  const out: number[] = [];
  for (const p of parts) {
    out.push(...(typeof p === "number" ? [p] : await model.tokenizer.encode(p)));
  }
  return out;
}

async function parse(m: PolicyModel, output: number[]) {
  let n = 0;
  return await m.parse(output, () => `call_${n++}`, tools);
}

Deno.test("qwen3.5: renders the format (tools, trimmed text, XML calls, generation prompt)", async () => {
  const messages: Message[] = [
    { role: "system", content: "  Be brief. " },
    { role: "user", content: "List files\n" },
    {
      role: "assistant",
      content: "Listing.",
      reasoning_content: "\nI will run ls.\n",
      tool_calls: [{
        id: "c1",
        name: "bash",
        arguments: '{"command": "ls", "timeout": 1.0, "bg": false}',
      }],
    },
    { role: "tool", content: " a.py\n", tool_call_id: "c1" },
  ];
  const { text } = await model.renderFull(messages, tools);
  assert.ok(
    text.startsWith(
      "<|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n" +
        '{"type": "function", "function": {"name": "bash", "description": "Run a command", "parameters": ',
    ),
  );
  assert.ok(
    text.includes("</IMPORTANT>\n\nBe brief.<|im_end|>\n<|im_start|>user\nList files<|im_end|>\n"),
  );
  assert.ok(
    text.endsWith(
      "<|im_start|>assistant\n<think>\nI will run ls.\n</think>\n\nListing.\n\n<tool_call>\n<function=bash>\n" +
        "<parameter=command>\nls\n</parameter>\n<parameter=timeout>\n1.0\n</parameter>\n" +
        "<parameter=bg>\nFalse\n</parameter>\n</function>\n</tool_call><|im_end|>\n" +
        "<|im_start|>user\n<tool_response>\na.py\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\n",
    ),
    text,
  );
  // Qwen3.6 writes non-string values as JSON.
  assert.ok(
    (await q36.renderFull(messages, tools)).text.includes("<parameter=bg>\nfalse\n</parameter>"),
  );
});

Deno.test("qwen3.5: earlier reasoning is dropped after a new user message; thinking off", async () => {
  const a: AssistantMessage = { role: "assistant", content: "Hi.", reasoning_content: "greet" };
  const { text } = await model.renderFull([{ role: "user", content: "a" }, a, {
    role: "user",
    content: "b",
  }], []);
  assert.equal(
    text,
    "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nHi.<|im_end|>\n<|im_start|>user\nb<|im_end|>\n" +
      "<|im_start|>assistant\n<think>\n",
  );
  assert.equal(model.format.quirks.dropsOldReasoning, true);
  assert.equal(model.format.quirks.promptOpensReasoning, true);
  const off = await PolicyModel.load({
    family: "qwen3.5",
    templateKwargs: { enable_thinking: false },
  });
  assert.ok((await off.renderFull([{ role: "user", content: "a" }], [])).text.endsWith(
    "<|im_start|>assistant\n<think>\n\n</think>\n\n",
  ));
  assert.equal(off.format.quirks.promptOpensReasoning, false);
  const keep = await PolicyModel.load({
    family: "qwen3.6",
    templateKwargs: { preserve_thinking: true },
  });
  assert.ok(
    (await keep.renderFull([{ role: "user", content: "a" }, a, { role: "user", content: "b" }], []))
      .text.includes("<|im_start|>assistant\n<think>\ngreet\n</think>\n\nHi.<|im_end|>"),
  );
  assert.equal(keep.format.quirks.dropsOldReasoning, false);
});

Deno.test("qwen3.5: the delta after a recorded turn, and a system message mid-conversation", async () => {
  const delta = await model.renderDeltaIds([
    { role: "tool", content: "out 1", tool_call_id: "a" },
    { role: "tool", content: "out 2", tool_call_id: "b" },
    { role: "system", content: "Reminder." },
  ]);
  assert.equal(
    delta.text,
    "\n<|im_start|>user\n<tool_response>\nout 1\n</tool_response>\n<tool_response>\nout 2\n" +
      "</tool_response><|im_end|>\n<|im_start|>system\nReminder.<|im_end|>\n<|im_start|>assistant\n<think>\n",
  );
  assert.deepEqual(delta.ids, await model.tokenizer.encode(delta.text));
});

Deno.test("qwen3.5: reasoning opened by the prompt, content, calls; round trip through the renderer", async () => {
  const message: AssistantMessage = {
    role: "assistant",
    content: "Running.",
    reasoning_content: "Need ls.",
    tool_calls: [
      { id: "call_0", name: "bash", arguments: '{"command": "ls </parameter> -la", "bg": true}' },
      { id: "call_1", name: "bash", arguments: '{"command": "pwd", "timeout": 2.5}' },
    ],
  };
  const sampled = await model.renderAnswerIds(message);
  assert.equal(sampled.at(-1), IM_END);
  assert.ok(!sampled.includes(THINK), "the prompt opened the reasoning");
  const out = await parse(model, sampled);
  assert.deepEqual(out.message, message);
  assert.equal(out.malformedToolCalls, 0);
  assert.equal(out.reasoningTokens, sampled.indexOf(END_THINK) + 1);
});

Deno.test("qwen3.5: cut off while reasoning; a tool call that ends unclosed reasoning", async () => {
  const cut = await parse(model, await ids("Still thinking about"));
  assert.deepEqual(cut.message, {
    role: "assistant",
    content: "",
    reasoning_content: "Still thinking about",
  });
  // The policy calls a tool without closing its reasoning: the call fires.
  const call = "\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n";
  const unclosed = await parse(
    model,
    await ids("Plan: list.\n\n", TOOL_CALL, call, "</tool_call>", IM_END),
  );
  assert.equal(unclosed.message.reasoning_content, "Plan: list.");
  assert.deepEqual(unclosed.message.tool_calls, [{
    id: "call_0",
    name: "bash",
    arguments: '{"command": "ls"}',
  }]);
  assert.equal(unclosed.message.content, "");
  // Streamed: the reasoning whole, nothing else before the end.
  const stream = model.streamingParser();
  let reasoning = "", text = "";
  for (const id of await ids("Plan: list.\n\n", TOOL_CALL, call, "</tool_call>", IM_END)) {
    const d = await stream.push([id]);
    reasoning += d.reasoning;
    text += d.text;
  }
  assert.deepEqual([reasoning, text], ["Plan: list.", ""]);
});

Deno.test("qwen3.5: a malformed call is text, counted in the turn, and in the answer", async () => {
  const bad = "<tool_call>\n<function=bash>\n<parameter=command>\nls\n</function>\n</tool_call>";
  const out = await parse(model, await ids("R\n", END_THINK, "\n\nTrying.\n\n" + bad, IM_END));
  assert.equal(out.malformedToolCalls, 1);
  assert.equal(out.message.tool_calls, undefined);
  assert.equal(out.message.content, "Trying.\n\n" + bad);
});

Deno.test("qwen3.5: stream text stops at the first tool call; whitespace is held back", async () => {
  const output = await ids(
    "Think 🤔\n",
    END_THINK,
    "\n\n  Here we go 👩‍💻 \n\n",
    TOOL_CALL,
    "\n<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>\n</tool_call>",
    IM_END,
  );
  const { sent, final } = await streamAgainstParse(model, output, { tools });
  assert.deepEqual(sent, { reasoning: "Think 🤔", text: "Here we go 👩‍💻" });
  assert.equal(final.content, "Here we go 👩‍💻");
});

Deno.test("qwen3.8: reasoning_effort in the system turn, empty system omitted, history kept", async () => {
  const load = (templateKwargs: Record<string, unknown> = {}) =>
    PolicyModel.load({ family: "qwen3.8", templateKwargs });
  const xhigh = await load();
  const user: Message = { role: "user", content: "hi" };
  const empty: Message = { role: "system", content: " " };
  const instruction = "<|im_start|>system\nReasoning effort is set to xhigh. Please think " +
    "carefully through the task, validate key assumptions, consider plausible alternatives, " +
    "and prioritize correctness, consistency, and clarity in the final answer.";
  assert.equal(
    (await xhigh.renderFull([empty, user], [])).text,
    instruction + "<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n",
  );
  assert.ok(
    (await xhigh.renderFull([{ role: "system", content: "S" }, user], [])).text
      .startsWith(instruction + "\n\nS<|im_end|>\n"),
  );
  assert.ok(
    (await xhigh.renderFull([user], tools)).text.startsWith(instruction + "\n\n# Tools\n\n"),
  );
  // `medium` writes no instruction: an empty system message renders nothing.
  const medium = await load({ reasoning_effort: "medium" });
  assert.equal(
    (await medium.renderFull([empty, user], [])).text,
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n",
  );
  const low = await load({ reasoning_effort: "low" });
  assert.ok(
    (await low.renderFull([user], [])).text
      .startsWith("<|im_start|>system\nReasoning effort is set to low."),
  );
  // Thinking off: no instruction.
  const off = await load({ enable_thinking: false });
  assert.ok((await off.renderFull([user], [])).text.startsWith("<|im_start|>user\n"));
  // preserve_thinking is on by default: earlier reasoning stays; inline <think> is content.
  const earlier: AssistantMessage = {
    role: "assistant",
    content: "a</think>b",
    reasoning_content: "r",
  };
  const later = (await medium.renderFull([user, earlier, { role: "user", content: "more" }], []))
    .text;
  assert.ok(later.includes("<think>\nr\n</think>\n\na</think>b<|im_end|>"), later);
  assert.equal(medium.format.quirks.dropsOldReasoning, false);
  await assert.rejects(load({ reasoning_effort: "max" }), /reasoning_effort is "max"; expected/);
});
