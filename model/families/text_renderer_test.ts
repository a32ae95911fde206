/**
 * `TokenizedRenderer` on the Qwen3 chat template: the delta after a recorded assistant turn.
 */
import assert from "node:assert/strict";
import { generateConversations } from "../../tests/invariants/conversation_generator.ts";
import type { AssistantMessage, Message } from "../../canonical/mod.ts";
import { ChatTemplate } from "../chat_template.ts";
import { PolicyModel } from "../policy_model.ts";
import { JinjaTextRenderer } from "./jinja_format.ts";
import { TokenizedRenderer } from "./text_renderer.ts";

const model = await PolicyModel.load();
const renderer = model.format.renderer as TokenizedRenderer;
const delta = (messages: Message[]) => renderer.deltaText(messages);

const user: Message = { role: "user", content: "Look at a.py" };
const assistant: AssistantMessage = {
  role: "assistant",
  content: "",
  reasoning_content: "Read both.",
  tool_calls: [
    { id: "c1", name: "read_file", arguments: '{"path": "a.py"}' },
    { id: "c2", name: "read_file", arguments: '{"path": "b.py"}' },
  ],
};
const results: Message[] = [
  { role: "tool", content: "print('a')\n", tool_call_id: "c1" },
  { role: "tool", content: "", tool_call_id: "c2" },
];

Deno.test("delta: tool results merge into one user turn, then the generation prompt", () => {
  assert.equal(
    delta(results),
    "\n<|im_start|>user\n<tool_response>\nprint('a')\n\n</tool_response>\n" +
      "<tool_response>\n\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
  );
});

Deno.test("delta: equals the suffix of a full render inside a tool loop", async () => {
  const before = [user, assistant];
  const prefix = await model.renderFull(before, [], false);
  const full = await model.renderFull([...before, ...results], []);
  // `prefix` ends with the assistant's `<|im_end|>\n`; the delta starts right after `<|im_end|>`.
  assert.ok(prefix.text.endsWith("<|im_end|>\n"));
  assert.equal(full.text, prefix.text.slice(0, -1) + delta(results));
});

Deno.test("delta: a new user turn", () => {
  assert.equal(
    delta([{ role: "user", content: "Next?" }]),
    "\n<|im_start|>user\nNext?<|im_end|>\n<|im_start|>assistant\n",
  );
});

Deno.test("delta: a system message mid-conversation stays a system turn in place", () => {
  assert.equal(
    delta([
      { role: "system", content: "Reminder." },
      { role: "user", content: "Go on." },
    ]),
    "\n<|im_start|>system\nReminder.<|im_end|>\n<|im_start|>user\nGo on.<|im_end|>\n" +
      "<|im_start|>assistant\n",
  );
  assert.equal(
    delta([results[0], { role: "system", content: "Two leading" }]),
    "\n<|im_start|>user\n<tool_response>\nprint('a')\n\n</tool_response><|im_end|>\n" +
      "<|im_start|>system\nTwo leading<|im_end|>\n<|im_start|>assistant\n",
  );
});

Deno.test("delta: nothing new is just the generation prompt; template kwargs apply", async () => {
  assert.equal(delta([]), "\n<|im_start|>assistant\n");
  const off = await PolicyModel.load({ templateKwargs: { enable_thinking: false } });
  assert.equal(
    (await off.renderDeltaIds([{ role: "user", content: "x" }])).text,
    "\n<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
  );
});

Deno.test("delta: a template that never closes an assistant turn is an error", () => {
  const template = new ChatTemplate("{% for m in messages %}{{ m.content }}{% endfor %}", {});
  const text = new JinjaTextRenderer(template, {});
  const bad = new TokenizedRenderer(text, model.tokenizer, "<|im_end|>", "<|im_start|>");
  assert.throws(() => bad.deltaText(results), /does not close an assistant turn/);
});

Deno.test("delta: on generated tool loops, full(k) = full(k-1) + sampled(k-1) + delta", async () => {
  let checked = 0;
  for (const c of generateConversations(5000, 80)) {
    for (let k = 1; k < c.turns.length; k++) {
      const t = c.turns[k], prev = c.turns[k - 1];
      if (!t.prefixStable) continue;
      const newMessages = c.messages.slice(prev.index + 1, t.index);
      const d = delta(newMessages);
      const [a, b] = await Promise.all([
        model.renderFull(c.messages.slice(0, prev.index), c.tools),
        model.renderFull(c.messages.slice(0, t.index), c.tools),
      ]);
      assert.equal(b.text, a.text + prev.sampledText + d, `seed ${c.seed}, turn ${k}`);
      // The delta's ids are the ids a full render has there.
      const ids = (await model.renderDeltaIds(newMessages)).ids;
      assert.deepEqual(b.ids.slice(b.ids.length - ids.length), ids, `seed ${c.seed}, turn ${k}`);
      checked++;
    }
  }
  assert.ok(checked >= 80, `only ${checked}`);
});
