import { rng } from "../../../tests/invariants/random_text.ts";
import assert from "node:assert/strict";
import { PolicyModel } from "../../policy_model.ts";
import type { AssistantMessage } from "../../../canonical/mod.ts";
import {
  IncrementalDecoder,
  PlainParser,
  PlainStreamParser,
  type StreamDeltas,
} from "../../parsers/mod.ts";
import { ThinkStreamParser } from "../think_tags.ts";
import { streamAgainstParse } from "../../../tests/support/streamed_prefix.ts";
import { HermesParser } from "./hermes_parser.ts";

const model = await PolicyModel.load();
assert.ok(model.parser instanceof HermesParser);
const THINK = model.idOf("<think>")!, END_THINK = model.idOf("</think>")!;
const TOOL_CALL = model.idOf("<tool_call>")!, IM_END = model.endOfTurnId;
const END_OF_TEXT = model.idOf("<|endoftext|>")!;

/** Single-byte ids that decode to U+FFFD alone (non-ASCII bytes: UTF-8 lead or continuation). */
const BYTE_IDS: number[] = [];
for (let id = 0; id < 300; id++) {
  if (await model.decode([id]) === "\uFFFD") BYTE_IDS.push(id);
}
assert.ok(BYTE_IDS.length > 60);

async function parse(ids: readonly number[], m: PolicyModel = model): Promise<AssistantMessage> {
  let n = 0;
  return (await m.parse(ids, () => `id${n++}`)).message;
}

function stream(ids: number[], chunk: () => number, m: PolicyModel = model, label = "") {
  return streamAgainstParse(m, ids, { chunk, label });
}

async function idsOf(...parts: (string | number | number[])[]): Promise<number[]> {
  const ids: number[] = [];
  for (const p of parts) {
    if (typeof p === "number") ids.push(p);
    else if (Array.isArray(p)) ids.push(...p);
    else ids.push(...await model.tokenizer.encode(p));
  }
  return ids;
}

const one = () => 1;

Deno.test("hermes stream: reasoning then content, id by id", async () => {
  const ids = await idsOf("<think>\nThe user greets.\n\n</think>\n\nHello 👋 there!\n<|im_end|>");
  const parser = model.streamingParser();
  const deltas: StreamDeltas[] = [];
  for (const id of ids) deltas.push(await parser.push([id]));
  const reasoning = deltas.map((d) => d.reasoning).join("");
  const text = deltas.map((d) => d.text).join("");
  assert.equal(reasoning, "The user greets.");
  // The trailing "\n" is held back: the complete parse keeps it (no tool call follows).
  assert.equal(text, "Hello 👋 there!");
  assert.equal((await parse(ids)).content, "Hello 👋 there!\n");
  // No delta ever carries half an emoji or a leading newline.
  for (const d of deltas) {
    assert.ok(!d.text.includes("\uFFFD") && !d.text.startsWith("\n"), JSON.stringify(d));
  }
  // Reasoning arrives before `</think>` (all but the held-back trailing newlines).
  const close = ids.indexOf(END_THINK);
  assert.equal(deltas.slice(0, close).map((d) => d.reasoning).join(""), "The user greets.");
});

Deno.test("hermes stream: a character split across ids is sent once whole", async () => {
  const ids = await idsOf(THINK, "a𡚴🫝", END_THINK, "中𡚴x");
  assert.ok(ids.length > 8);
  const { sent } = await stream(ids, one);
  assert.equal(sent.reasoning, "a𡚴🫝");
  assert.equal(sent.text, "中𡚴x");
  // Cut mid character: nothing of it is sent, the complete parse has U+FFFD.
  const cut = ids.slice(0, ids.indexOf(END_THINK) - 1);
  const { sent: s2, final } = await stream(cut, one);
  assert.equal(s2.reasoning, "a𡚴");
  assert.equal(final.reasoning_content, "a𡚴\uFFFD");
});

Deno.test("hermes stream: content stops at a tool call (id or text form)", async () => {
  const call = '{"name": "f", "arguments": {"q": "日本語 🎉"}}';
  const ids = await idsOf(
    "<think>\nR\n</think>\n\nLet me look.\n\n<tool_call>\n",
    call,
    "\n</tool_call><|im_end|>",
  );
  assert.ok(ids.includes(TOOL_CALL));
  const { sent, final } = await stream(ids, one);
  assert.equal(sent.text, "Let me look.");
  assert.equal(final.content, "Let me look.\n");
  assert.equal(final.tool_calls?.length, 1);

  // `<tool_call>` spelled with ordinary tokens: the complete parser matches its text too.
  const spelled = await idsOf(
    "<think>\nR\n</think>\n\nLook<",
    "tool",
    "_call>\n",
    call,
    "\n</tool_call>",
  );
  assert.ok(!spelled.includes(TOOL_CALL));
  const s2 = await stream(spelled, one);
  assert.equal(s2.final.tool_calls?.length, 1);
  assert.equal(s2.sent.text, "Look");
  // A lone "<" that is not a tool call is sent once more text follows.
  assert.equal(
    (await stream(await idsOf(THINK, END_THINK, "a < b <", "c"), one)).sent.text,
    "a < b <c",
  );
});

Deno.test("hermes stream: outputs not beginning with `<think>`", async () => {
  // No think at all: the text could still turn into reasoning, so nothing streams.
  assert.deepEqual((await stream(await idsOf("Just text."), one)).sent, {
    reasoning: "",
    text: "",
  });
  // `</think>` without `<think>`: a later `<think>` id would undo it, so nothing streams.
  const opened = await stream(await idsOf("Thinking.\n</think>\n\nAnswer.<|im_end|>"), one);
  assert.deepEqual(opened.sent, { reasoning: "", text: "" });
  assert.equal(opened.final.reasoning_content, "Thinking.");
  const undone = await idsOf("Thinking.\n</think>\n\nAnswer.", THINK, "more");
  assert.equal((await parse(undone)).reasoning_content, undefined);
  assert.deepEqual((await stream(undone, one)).sent, { reasoning: "", text: "" });
  // Junk, then `<think>` … `</think>`: settled at `</think>`, then the body streams.
  const junk = await stream(
    await idsOf("junk", THINK, "\nR 🤔\n", END_THINK, "\nBody.", THINK),
    one,
  );
  assert.deepEqual(junk.sent, { reasoning: "R 🤔", text: "Body.<think>" });
  assert.equal(junk.final.content, "Body.<think>");
});

Deno.test("hermes stream: end-of-turn ids are held, and text when more follows", async () => {
  const ids = await idsOf(THINK, "r", END_THINK, "a", IM_END, "b", IM_END, END_OF_TEXT);
  const parser = new ThinkStreamParser(
    {
      thinkStart: THINK,
      thinkEnd: END_THINK,
      endOfTurn: [IM_END, END_OF_TEXT],
      promptOpensReasoning: false,
      trim: "newlines",
      toolCallStart: { text: "<tool_call>", id: TOOL_CALL },
    },
    (ids) => model.decode(ids),
  );
  const texts: string[] = [];
  for (const id of ids) texts.push((await parser.push([id])).text);
  assert.deepEqual(texts.filter((t) => t !== ""), ["a", "<|im_end|>b"]);
  assert.equal((await parse(ids)).content, "a<|im_end|>b");
});

Deno.test("hermes stream: pushes that overlap are serialized", async () => {
  const ids = await idsOf("<think>\nA long 思考 ✨.\n</think>\n\nAnd the 答え 🌸 is 42.\n");
  const parser = model.streamingParser();
  const deltas = await Promise.all(ids.map((id) => parser.push([id])));
  assert.equal(deltas.map((d) => d.reasoning).join(""), "A long 思考 ✨.");
  assert.equal(deltas.map((d) => d.text).join(""), "And the 答え 🌸 is 42.");
});

Deno.test("incremental decoder: bounded work on long and invalid outputs", async () => {
  let decoded = 0;
  const counting = (ids: number[]) => {
    decoded += ids.length;
    return model.decode(ids);
  };
  const text = "Streaming 🦀 and 漢字 ".repeat(300);
  const ids = await model.tokenizer.encode(text);
  const dec = new IncrementalDecoder(counting);
  let out = "";
  for (const id of ids) out += await dec.push([id]);
  out += await dec.push([], true);
  assert.equal(out, text);
  assert.ok(decoded < 3 * ids.length, `${decoded} ids decoded for ${ids.length}`);

  // Lone continuation bytes never end cleanly: the window is cut and stays short.
  const garbage: number[] = [];
  const r = rng(7);
  for (let i = 0; i < 2000; i++) garbage.push(BYTE_IDS[Math.floor(r() * BYTE_IDS.length)]);
  garbage.push(...await model.tokenizer.encode("ok"));
  decoded = 0;
  const dec2 = new IncrementalDecoder(counting);
  let out2 = "";
  for (const id of garbage) {
    const d = await dec2.push([id]);
    out2 += d;
    assert.ok((await model.decode(garbage)).startsWith(out2));
  }
  assert.ok(decoded < 20 * garbage.length, `${decoded} ids decoded for ${garbage.length}`);
  assert.equal(out2 + await dec2.push([], true), await model.decode(garbage));

  // A cut never lands where later ids still settle a character: here ids that decode to nothing
  // (past the vocabulary) sit between the bytes of 𡚴, after a long invalid run.
  const [a, b, c] = await model.tokenizer.encode("𡚴");
  const none = model.vocabSize + 5;
  assert.equal(await model.decode([none]), "");
  for (let k = 10; k < 40; k++) {
    const ids = [THINK, ...Array(k).fill(b), a, none, none, none, none, none, b, c, END_THINK];
    const { sent } = await stream(ids, one);
    assert.ok(sent.reasoning.endsWith("𡚴"));
  }
});

Deno.test("streaming parsers: the family's, and the plain one", async () => {
  assert.ok(model.streamingParser() instanceof ThinkStreamParser);
  const plain = new PlainParser(model.stopTokenIds, (ids) => model.decode(ids));
  const p = new PlainStreamParser(model.stopTokenIds, (ids) => model.decode(ids));
  const ids = await idsOf("<think>x 🫝", IM_END, "y", IM_END);
  let text = "";
  for (const id of ids) text += (await p.push([id])).text;
  assert.equal(text, (await plain.parse(ids)).message.content);
});

// ---- property test: generated outputs, random chunking ----

const WORDS = [
  "the",
  " answer",
  " is",
  " 42",
  ".",
  ",",
  " 🫝",
  "😀",
  "👍🏽",
  " 👨‍👩‍👧",
  "中文",
  "字符",
  "𡚴",
  " été",
  " naïve",
  " Ω≈ç",
  "  ",
  "\t",
  "\n",
  "\n\n",
  " < ",
  "<tool",
  "a<b",
  "{}",
  '"q"',
  "\r\n",
];

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

function words(r: () => number, max: number): string {
  let s = "";
  const n = Math.floor(r() * max);
  for (let i = 0; i < n; i++) s += pick(r, WORDS);
  return s;
}

function newlines(r: () => number): string {
  return "\n".repeat(pick(r, [0, 0, 1, 1, 2, 3]));
}

function toolCall(r: () => number): string {
  const args = JSON.stringify({ q: words(r, 4), n: Math.floor(r() * 100), u: "ünï 🧪 漢" });
  const body = pick(r, [
    `{"name": "search", "arguments": ${args}}`,
    `{"name":"f","arguments":${args}}`,
    `{"name": "now"}`,
    `{"name": "f", "arguments": {"a": }`, // malformed
    `{"arguments": {}}`, // malformed: no name
    `not json ${words(r, 3)}`,
  ]);
  return `<tool_call>\n${body}\n</tool_call>`;
}

/** One generated output as ids, and whether it is the shape whose content streams whole. */
async function generate(r: () => number): Promise<{ ids: number[]; whole: boolean }> {
  const parts: (string | number | number[])[] = [];
  const shape = pick(r, [
    "think",
    "think",
    "think",
    "think",
    "truncated",
    "none",
    "opened",
    "junk",
  ]);
  if (shape === "think" || shape === "truncated") parts.push(THINK);
  if (shape === "junk") parts.push(words(r, 3), THINK);
  if (shape !== "none") parts.push(newlines(r) + words(r, 12) + newlines(r));
  if (shape !== "none" && shape !== "truncated") parts.push(END_THINK);
  parts.push(newlines(r) + words(r, 12) + newlines(r));
  const calls = r() < 0.4 ? 1 + Math.floor(r() * 3) : 0;
  for (let i = 0; i < calls; i++) {
    // Sometimes `<tool_call>` spelled with ordinary tokens.
    const call = toolCall(r);
    if (r() < 0.2) parts.push("<", "tool", "_call>", call.slice("<tool_call>".length));
    else parts.push(call);
    parts.push(newlines(r) + (r() < 0.3 ? words(r, 4) : ""));
  }
  let ids = await idsOf(...parts);
  // Byte-level noise: lone non-ASCII bytes, misplaced special ids.
  const noisy = r() < 0.15;
  if (noisy) {
    for (let k = 0; k < 3; k++) {
      const at = 1 + Math.floor(r() * ids.length);
      ids.splice(at, 0, pick(r, [...BYTE_IDS.slice(0, 5), IM_END, THINK, END_THINK, TOOL_CALL]));
    }
  }
  // Cut off (max tokens), else end the turn.
  const cut = r() < 0.2;
  if (cut) ids = ids.slice(0, 1 + Math.floor(r() * ids.length));
  else ids.push(...(r() < 0.2 ? [IM_END, END_OF_TEXT] : [IM_END]));
  return { ids, whole: shape === "think" && calls === 0 && !noisy && !cut };
}

async function property(m: PolicyModel, seed: number, count: number) {
  const r = rng(seed);
  let wholeChecked = 0;
  for (let i = 0; i < count; i++) {
    const { ids, whole } = await generate(r);
    const max = pick(r, [1, 2, 3, 5, 8, 16, 64]);
    const { sent, final } = await stream(ids, () => 1 + Math.floor(r() * max), m, `#${i}`);
    if (ids[0] === THINK && ids.includes(END_THINK)) {
      // A closed think is sent whole.
      assert.equal(sent.reasoning, final.reasoning_content, `#${i} ${JSON.stringify(ids)}`);
    }
    const rest = final.content.replace(/\n+$/, "");
    if (whole && !rest.includes("<tool") && !/[<\uFFFD]$/.test(rest)) {
      assert.equal(sent.text, rest, `#${i} ${JSON.stringify(ids)}`);
      wholeChecked++;
    }
  }
  assert.ok(wholeChecked > count / 10, `only ${wholeChecked} outputs streamed whole`);
}

Deno.test("hermes stream: prefix guarantee over generated outputs and random chunks", async () => {
  await property(model, 1234, 250);
});

Deno.test("hermes stream: the JS tokenizer engine keeps the guarantee too", async () => {
  const js = await PolicyModel.load({ engine: "js" });
  await property(js, 99, 60);
});
