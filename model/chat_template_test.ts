import assert from "node:assert/strict";
import { referencePython, renderWithTransformers } from "../tests/reference/python_env.ts";
import { ChatTemplate } from "./chat_template.ts";
import type { AssistantMessage, Message } from "../canonical/mod.ts";
import { PolicyModel } from "./policy_model.ts";
import { toTemplateMessages } from "./template_input.ts";
import { referenceMissing, skipGroup } from "../tests/support/skips.ts";

const NO_VENV = referencePython() === null;

function render(source: string, content: string): string {
  return new ChatTemplate(source, {}).render([{ role: "user", content }], [], {
    addGenerationPrompt: false,
  });
}

Deno.test("chat template: strip/lstrip/rstrip(chars) strip only chars, as Python does", () => {
  const s = "\n  x a x \n\n";
  const t = (expr: string) => render(`{{ messages[0].content${expr} }}`, s);
  assert.equal(t(".strip('\\n')"), "  x a x ");
  assert.equal(t(".lstrip('\\n')"), "  x a x \n\n");
  assert.equal(t(".rstrip('\\n')"), "\n  x a x ");
  assert.equal(t(".strip(' x\\n')"), "a");
  // Without chars: whitespace, as before.
  assert.equal(t(".strip()"), "x a x");
  assert.equal(t(".lstrip()"), "x a x \n\n");
  assert.equal(t(".rstrip()"), "\n  x a x");
  assert.equal(t(" | trim"), "x a x");
});

const edgy: AssistantMessage = {
  role: "assistant",
  content: "  indented answer",
  reasoning_content: "\n  spaced reasoning \t\n",
};
const edgyHistory: Message[] = [
  { role: "user", content: "q" },
  edgy,
  { role: "user", content: "again" },
  { ...edgy, tool_calls: [{ id: "a", name: "f", arguments: "{}" }] },
  { role: "tool", content: "r", tool_call_id: "a" },
];

Deno.test("chat template: Qwen3 keeps spaces around reasoning and before content", async () => {
  const model = await PolicyModel.load();
  const { text } = await model.renderFull(edgyHistory, []);
  assert.ok(
    text.includes("<think>\n  spaced reasoning \t\n</think>\n\n  indented answer\n<tool_call>"),
    text,
  );
});

Deno.test({
  name: `chat template: Qwen3 strip edge cases equal transformers${
    NO_VENV ? " (SKIPPED: no .venv; see tests/reference/requirements.txt)" : ""
  }`,
  ignore: skipGroup("chat template against transformers", referenceMissing()),
  async fn() {
    const model = await PolicyModel.load();
    const inline: Message = {
      role: "assistant",
      content: "<think>\n\n  inline  \n</think>\n\n  after",
    };
    const cases = [edgyHistory, [...edgyHistory.slice(0, 3), inline]];
    const refs = await renderWithTransformers(
      model.files.dir,
      cases.map((messages) => ({
        messages: toTemplateMessages(messages),
        add_generation_prompt: true,
      })),
    );
    for (const [i, messages] of cases.entries()) {
      const ours = await model.renderFull(messages, []);
      assert.equal(ours.text, refs[i].text);
      assert.deepEqual(ours.ids, refs[i].ids);
    }
  },
});
