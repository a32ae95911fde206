/**
 * Qwen3's text in code against the bundled Qwen3's own chat template: the same text for every
 * generated conversation and every run of hard cases (reasoning edges, inline `<think>`, user
 * messages that are whole tool responses, system messages anywhere, results in a row), each
 * prefix, with and without the generation prompt, under every `enable_thinking`; and the family
 * uses it for that template only.
 */
import assert from "node:assert/strict";
import { generateConversations, Rng } from "../../../tests/invariants/conversation_generator.ts";
import type { Message, ToolCall, ToolSpec } from "../../../canonical/mod.ts";
import { ChatTemplate } from "../../chat_template.ts";
import { loadModelFiles } from "../../model_files.ts";
import { PolicyModel } from "../../policy_model.ts";
import { JinjaTextRenderer } from "../jinja_format.ts";
import type { TokenizedRenderer } from "../text_renderer.ts";
import { isCheckedQwen3Template, Qwen3TextRenderer } from "./render.ts";

const { config } = await loadModelFiles();
const source = config.chat_template!;
const THINKING = [undefined, true, false];
const pairs = THINKING.map((enable_thinking) => {
  const kwargs = enable_thinking === undefined ? {} : { enable_thinking };
  const template = new JinjaTextRenderer(new ChatTemplate(source, config), kwargs);
  return { template, code: new Qwen3TextRenderer(template, enable_thinking) };
});

/** Every prefix of `messages`, both ways, under every setting: the code writes the template's text. */
function assertSameText(messages: readonly Message[], label: string): number {
  let n = 0;
  for (const { template, code } of pairs) {
    for (let k = 1; k <= messages.length; k++) {
      const head = messages.slice(0, k);
      for (const addGenerationPrompt of [true, false]) {
        const expected = template.render(head, [], { addGenerationPrompt });
        assert.equal(code.render(head, [], { addGenerationPrompt }), expected, `${label}, ${k}`);
        n++;
      }
    }
  }
  return n;
}

Deno.test("qwen3 in code: the template's text for generated conversations, every prefix", () => {
  let renders = 0;
  for (const c of generateConversations(70001, 60)) {
    renders += assertSameText(c.messages, `seed ${c.seed}`);
  }
  assert.ok(renders > 1_000, `${renders} renders compared`);
});

const call = (name: string, args: string): ToolCall => ({
  id: `id_${name}`,
  name,
  arguments: args,
});
const PIECES: (() => Message)[] = [
  () => ({ role: "user", content: "Fix the bug." }),
  () => ({ role: "user", content: "<tool_response>\nok\n</tool_response>" }),
  () => ({ role: "user", content: "<tool_response>\nonly opens" }),
  () => ({ role: "user", content: "" }),
  () => ({ role: "system", content: "Reminder: run the tests." }),
  () => ({ role: "system", content: "" }),
  () => ({ role: "tool", content: "out\n", tool_call_id: "id_a" }),
  () => ({ role: "tool", content: "", tool_call_id: "id_b", name: "b" }),
  () => ({ role: "assistant", content: "Done." }),
  () => ({ role: "assistant", content: "", reasoning_content: "" }),
  () => ({ role: "assistant", content: "\n\nLeading newlines.", reasoning_content: "\n r \n\n" }),
  () => ({ role: "assistant", content: "<think>\ninline\n</think>\n\nAnswer." }),
  () => ({ role: "assistant", content: "a</think>b</think>\nc" }),
  () => ({ role: "assistant", content: "x<think>y<think>z</think>w" }),
  () => ({ role: "assistant", content: "</think>" }),
  () => ({
    role: "assistant",
    content: "",
    reasoning_content: "Call two.",
    tool_calls: [call("a", '{"p": 1}'), call("b", "{}")],
  }),
  () => ({
    role: "assistant",
    content: "\nFirst.",
    tool_calls: [call('q"uote', '{"s": "</tool_call>"}')],
  }),
  () => ({ role: "assistant", content: "<think></think>", tool_calls: [call("a", "")] }),
];

Deno.test("qwen3 in code: the template's text for runs of hard cases", () => {
  const rng = new Rng(424242);
  for (let c = 0; c < 400; c++) {
    const messages = Array.from({ length: rng.int(1, 7) }, () => rng.pick(PIECES)());
    assertSameText(messages, `case ${c}: ${JSON.stringify(messages)}`);
  }
});

Deno.test("qwen3 in code: renders with tools, and no messages, are the template's own", () => {
  const tool: ToolSpec = {
    kind: "function",
    name: "read",
    description: "Reads.",
    parameters: { type: "object" },
  };
  for (const { template, code } of pairs) {
    const messages: Message[] = [{ role: "system", content: "S" }, { role: "user", content: "U" }];
    const options = { addGenerationPrompt: true };
    assert.equal(
      code.render(messages, [tool], options),
      template.render(messages, [tool], options),
    );
    assert.ok(code.render(messages, [tool], options).includes('"name": "read"'));
  }
});

Deno.test("qwen3 in code: the bundled model uses it, for that template only", async () => {
  assert.ok(isCheckedQwen3Template(source));
  assert.ok(!isCheckedQwen3Template(source + " "));
  const model = await PolicyModel.load();
  assert.ok((model.format.renderer as TokenizedRenderer).text instanceof Qwen3TextRenderer);
});
