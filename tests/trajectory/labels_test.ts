/**
 * Branch labels, label policies, retries, drift, rewards and SFT masks, through the real gateway
 * over HTTP. The agents are replays of the recorded Claude Code, pi and Codex traffic, extended
 * turn by turn with the gateway's answers; the scripted policy (TEST DOUBLE of the trainer)
 * answers every pending request with real Qwen3 ids.
 *
 * @module
 */
import { parseSseText } from "../../generation/mod.ts";
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { Sample, TurnRecord } from "../../trajectory/mod.ts";
import { answerText, scriptedLogprob, toolCallText } from "../support/scripted_policy.ts";
import {
  AGENT_FOOTER,
  callsText,
  CAT_OUTPUT,
  claudeCodeSession,
  LS_OUTPUT,
  mainBody,
  SUB_PROMPT,
  SUB_REPORT,
  subagentBody,
  titleBody,
} from "./claude_code_session.ts";
import {
  accumulateChat,
  anthropicTurn,
  chatTurn,
  codexEcho,
  fixtures,
  type Json,
  outputRanges,
  piEcho,
  responsesTurn,
  type RolloutHandle,
  runs,
  sum,
  type TestGateway,
  toolUses,
  type TreeResponse,
  withGateway,
} from "./agent_clients.ts";

const DENO = new URL("../../node_modules/.bin/deno", import.meta.url).pathname;
const ROOT = new URL("../../", import.meta.url).pathname;

function turnsOf(tree: TreeResponse, chain: number): TurnRecord[] {
  return tree.turns.filter((x) => x.chain === chain);
}

/**
 * The invariants every sample must satisfy against the exported tree: it is the leaf's exact
 * prompt + output; loss is 1 exactly on the sampled ids of `trained` turns; logprobs are the
 * recorded ones on sampled ids and 0 elsewhere; no SFT mark on sampled ids.
 */
function checkSample(sample: Sample, tree: TreeResponse, trained: (turn: string) => boolean) {
  const byId = new Map(tree.turns.map((x) => [x.id, x]));
  const leaf = byId.get(sample.turns.at(-1)!)!;
  assert.deepEqual(sample.input_ids, [...leaf.prompt_ids, ...leaf.output_ids]);
  assert.equal(sample.loss_mask.length, sample.input_ids.length);
  assert.equal(sample.logprobs.length, sample.input_ids.length);
  assert.equal(sample.sft_mask.length, sample.input_ids.length);
  const loss = new Array(sample.input_ids.length).fill(0);
  const logprobs = new Array(sample.input_ids.length).fill(0);
  let sampled = 0;
  for (const { turn, range: [a, b] } of outputRanges(sample, tree)) {
    const rec = byId.get(turn)!;
    assert.deepEqual(sample.input_ids.slice(a, b), rec.output_ids, `output of ${turn}`);
    for (let i = a; i < b; i++) {
      loss[i] = trained(turn) ? 1 : 0;
      logprobs[i] = rec.logprobs![i - a];
      assert.equal(sample.sft_mask[i], 0, `sft mark on sampled id ${i} of ${turn}`);
    }
    sampled += b - a;
  }
  assert.deepEqual(sample.loss_mask, loss);
  assert.deepEqual(sample.logprobs, logprobs);
  assert.equal(sample.num_sampled, sampled);
}

/** The policy's records agree with the tree: what the trainer saw is what was recorded. */
function checkAgainstPolicy(t: TestGateway, tree: TreeResponse) {
  const mine = t.policy.records.filter((p) => p.rollout_id === tree.rollout.id);
  const done = tree.turns.filter((x) => x.status === "done");
  assert.equal(mine.length, done.length, "one trainer request per recorded turn");
  done.forEach((turn, i) => {
    assert.deepEqual(turn.prompt_ids, mine[i].prompt_ids, `prompt of ${turn.id}`);
    assert.deepEqual(turn.output_ids, mine[i].output_ids, `output of ${turn.id}`);
    assert.deepEqual(turn.logprobs, turn.output_ids.map((_, k) => scriptedLogprob(k)));
  });
}

/**
 * The SFT runs of a sample, decoded, against the tool results' text. A token that straddles the
 * content and the template's wrapping newline (`>\n`, `}\n`) cannot be split and is kept, so a
 * run may carry one extra `\n` at either end, but only inside such a merged token.
 */
async function checkSft(t: TestGateway, sample: Sample, expected: string[]) {
  const found = runs(sample.sft_mask);
  assert.equal(found.length, expected.length, `sft runs ${JSON.stringify(found)}`);
  const markers = t.model.toolResponseMarkers!;
  for (let k = 0; k < found.length; k++) {
    const [a, b] = found[k];
    const ids = sample.input_ids.slice(a, b);
    const text = await t.model.decode(Array.from(ids));
    const content = expected[k];
    assert.equal(sample.input_ids[a - 1] === markers.open || sample.input_ids[a - 1] === 198, true);
    if (text === content) continue;
    assert.ok(
      [content + "\n", "\n" + content, "\n" + content + "\n"].includes(text),
      `sft run ${JSON.stringify(text)} is not ${JSON.stringify(content)}`,
    );
    if (text.endsWith("\n") && !content.endsWith("\n")) {
      assert.notEqual(await t.model.decode([ids.at(-1)!]), "\n", "a lone newline is scaffolding");
    }
    if (text.startsWith("\n") && !content.startsWith("\n")) {
      assert.notEqual(await t.model.decode([ids[0]]), "\n", "a lone newline is scaffolding");
    }
  }
}

Deno.test("Claude Code: sub-agent, side and compaction chains, labels with evidence", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "cc-labels" });
    const s = await claudeCodeSession(t, r);

    // Before the parent saw the tool result, the sub-agent chain is open.
    const before = s.treeBeforeClose;
    assert.equal(before.chains[1].label, "subagent");
    assert.equal(before.chains[1].evidence.closed_by_turn, undefined);

    const tree = await t.tree(r.id);
    checkAgainstPolicy(t, tree);
    const [t0, t1, t2, t3, t4, t5, t6] = tree.turns;
    assert.equal(tree.turns.length, 7);
    assert.deepEqual(tree.turns.map((x) => x.mount), [
      "root",
      "rewritten",
      "extend",
      "extend",
      "extend",
      "rewritten",
      "rewritten",
    ]);
    assert.deepEqual(tree.turns.map((x) => x.chain), [0, 1, 1, 0, 0, 2, 3]);
    assert.deepEqual(tree.turns.map((x) => x.parent), [
      null,
      null,
      t1.id,
      t0.id,
      t3.id,
      null,
      null,
    ]);
    assert.deepEqual(tree.chains.map((c) => [c.id, c.label, c.parent, c.root]), [
      [0, "main", null, t0.id],
      [1, "subagent", 0, t1.id],
      [2, "side", null, t5.id],
      [3, "compaction", 0, t6.id],
    ]);
    assert.deepEqual(tree.chains[1].evidence, {
      reason: "new system prompt while a sub-agent tool call was pending",
      tool_call_id: s.agentCallId,
      tool_name: "Agent",
      parent_turn: t0.id,
      prompt_matched: true,
      closed_by_turn: t3.id,
    });
    assert.equal(tree.chains[2].evidence.reason, "no tools offered");
    assert.equal(tree.chains[3].evidence.replaced_chain, 0);
    assert.equal(tree.chains[3].evidence.replaced_turn, t4.id);
    assert.equal(t2.retries + t3.retries + t6.retries, 0);

    // The sub-agent's prompt came from the Agent call; the parent's result carries its report.
    assert.ok(t1.messages.at(-1)!.content.endsWith(SUB_PROMPT));
    const result = t3.messages.find((m) => m.role === "tool")!;
    assert.equal(result.content, `${SUB_REPORT}\n${AGENT_FOOTER}`);

    // Default policy: every chain trains except the side request, which is dropped.
    const samples = await t.finish(r.id, 1);
    assert.deepEqual(samples.map((x) => [x.branch, x.chain, x.turns]), [
      ["subagent", 1, [t1.id, t2.id]],
      ["main", 0, [t0.id, t3.id, t4.id]],
      ["compaction", 3, [t6.id]],
    ]);
    const [sub, main, compaction] = samples;
    assert.deepEqual(sub.parent, { chain: 0, turn: t0.id, tool_call_id: s.agentCallId });
    assert.equal(main.parent, null);
    assert.deepEqual(compaction.parent, { chain: 0 });
    for (const x of samples) {
      checkSample(x, tree, () => true);
      assert.equal(x.metadata.label_action, "train");
      assert.equal(x.reward, 1);
      assert.ok(sum(x.loss_mask) > 0);
    }
    assert.deepEqual(sub.metadata.evidence, tree.chains[1].evidence);
    assert.deepEqual(await t.samples(r.id), samples, "samples are stable after finish");
    assert.equal(t4.id, main.turns.at(-1));
    assert.equal(t5.branch, "side");
  });
});

Deno.test("side request: dropped by default, in the samples with loss 0 under side=mask", async () => {
  await withGateway(async (t) => {
    for (const [id, labels] of [["side-drop", undefined], ["side-mask", { side: "mask" }]]) {
      const r = await t.rollout({ id, ...(labels ? { labels } : {}) });
      t.replies.push(answerText("The user wants a file.", "I will create it."));
      await anthropicTurn(t, r, mainBody());
      t.replies.push(answerText("Title.", '{"title": "Create a probe file"}'));
      const side = await anthropicTurn(t, r, titleBody());
      assert.deepEqual(side.content.at(-1), {
        type: "text",
        text: '{"title": "Create a probe file"}',
      });
      const tree = await t.tree(r.id);
      assert.deepEqual(tree.chains.map((c) => c.label), ["main", "side"]);
      const samples = await t.finish(r.id, 1);
      if (!labels) {
        assert.deepEqual(samples.map((x) => x.branch), ["main"]);
        continue;
      }
      assert.deepEqual(samples.map((x) => [x.branch, x.metadata.label_action]), [
        ["main", "train"],
        ["side", "mask"],
      ]);
      checkSample(samples[0], tree, () => true);
      checkSample(samples[1], tree, () => false);
      assert.equal(sum(samples[1].loss_mask), 0);
      assert.ok(samples[1].num_sampled > 0);
    }
  });
});

Deno.test("parallel sub-agents with one system prompt are each labelled subagent", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "cc-parallel" });
    const second = "Read README.md and summarise it in one sentence.";
    t.replies.push(callsText("Two independent tasks: two sub-agents.", [
      ["Agent", { description: "List files", prompt: SUB_PROMPT, subagent_type: "Explore" }],
      ["Agent", { description: "Summarise README", prompt: second, subagent_type: "Explore" }],
    ]));
    const a0 = await anthropicTurn(t, r, mainBody());
    const calls = toolUses(a0);
    assert.deepEqual(calls.map((c) => c.input.prompt), [SUB_PROMPT, second]);
    // Claude Code starts both sub-agents at once; the second arrives while the first is open.
    t.replies.push(answerText("Listing.", SUB_REPORT), answerText("Reading.", "It says hello."));
    await anthropicTurn(t, r, subagentBody(SUB_PROMPT));
    await anthropicTurn(t, r, subagentBody(second));
    const tree = await t.tree(r.id);
    assert.deepEqual(tree.chains.map((c) => [c.label, c.parent]), [
      ["main", null],
      ["subagent", 0],
      ["subagent", 0],
    ]);
    assert.deepEqual(
      tree.chains.slice(1).map((c) => c.evidence.tool_call_id),
      calls.map((c) => c.id),
    );
    assert.ok(tree.chains.slice(1).every((c) => c.evidence.prompt_matched === true));
  });
});

Deno.test("a tool-less side request while a sub-agent runs stays side", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "cc-side-during-agent" });
    t.replies.push(toolCallText("Delegate.", "Agent", {
      description: "List repository files",
      prompt: SUB_PROMPT,
      subagent_type: "general-purpose",
    }));
    const a0 = await anthropicTurn(t, r, mainBody());
    t.replies.push(answerText("Title.", '{"title": "Probe file"}'));
    await anthropicTurn(t, r, titleBody());
    t.replies.push(answerText("Listing.", SUB_REPORT));
    await anthropicTurn(t, r, subagentBody(SUB_PROMPT));
    const tree = await t.tree(r.id);
    assert.deepEqual(tree.chains.map((c) => [c.label, c.parent]), [
      ["main", null],
      ["side", null],
      ["subagent", 0],
    ]);
    assert.equal(tree.chains[2].evidence.tool_call_id, toolUses(a0)[0].id);
  });
});

Deno.test("retry: Claude Code re-sends (stream, then stream:false) replay one turn", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "cc-retry" });
    t.replies.push(toolCallText("Run it.", "Bash", { command: "ls -a", description: "List" }));
    const body = mainBody();
    const streamed = await anthropicTurn(t, r, body);
    // A JSON reply to a stream is a failure for Claude Code: it re-sends with stream:false.
    const json = await anthropicTurn(t, r, { ...body, stream: false });
    const again = await anthropicTurn(t, r, body);
    assert.deepEqual(json.content, streamed.content);
    assert.deepEqual(again.content, streamed.content);
    assert.equal(json.stop_reason, "tool_use");
    assert.equal(json.usage.input_tokens, streamed.usage.input_tokens);
    assert.equal(json.usage.output_tokens, streamed.usage.output_tokens);
    // Concurrent identical re-sends attach to the same turn as well.
    await Promise.all([anthropicTurn(t, r, body), anthropicTurn(t, r, { ...body, stream: false })]);

    let tree = await t.tree(r.id);
    assert.equal(tree.turns.length, 1);
    assert.equal(tree.turns[0].retries, 4);
    checkAgainstPolicy(t, tree);

    // The replayed tool_use id keys the next request onto the recorded turn.
    t.replies.push(answerText("Done.", "Listed."));
    const [call] = toolUses(streamed);
    await anthropicTurn(t, r, {
      ...body,
      messages: [...body.messages, { role: "assistant", content: json.content }, {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: call.id, content: LS_OUTPUT }],
      }],
    });
    tree = await t.tree(r.id);
    assert.deepEqual(tree.turns.map((x) => [x.mount, x.parent]), [
      ["root", null],
      ["extend", tree.turns[0].id],
    ]);
    checkAgainstPolicy(t, tree);
  });
});

Deno.test("retry: pi's SDK re-sends the identical body after a lost response", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "pi-retry" });
    t.replies.push(toolCallText("I should run a command.", "bash", { command: "ls -a" }));
    const sent: { body: string; retry: string | null; text?: string }[] = [];
    const client = new OpenAI({
      baseURL: `${r.base_url}/v1`,
      apiKey: r.token,
      maxRetries: 2,
      fetch: async (url: string | URL | Request, init?: RequestInit) => {
        const headers = new Headers(init?.headers);
        const attempt = { body: String(init?.body), retry: headers.get("x-stainless-retry-count") };
        sent.push(attempt);
        const res = await fetch(url, init);
        if (sent.length > 1) return res;
        // The whole answer arrives, then the connection drops: the SDK tries again.
        (attempt as { text?: string }).text = await res.text();
        throw new TypeError("error reading a body from connection: connection reset");
      },
    });
    const body = fixtures.pi()[0].body;
    const stream = await client.chat.completions.create(
      body as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
    );
    const chunks: Json[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const answer = accumulateChat(chunks);

    assert.equal(sent.length, 2);
    assert.equal(sent[0].body, sent[1].body, "the SDK re-sends the identical body");
    assert.deepEqual(sent.map((s) => s.retry), ["0", "1"]);
    const first = accumulateChat(
      parseSseText(sent[0].text!).events.filter((e) => e.data.startsWith("{"))
        .map((e) => JSON.parse(e.data)),
    );
    assert.deepEqual(answer, first, "the replay is the recorded answer");
    assert.equal(answer.tool_calls[0].function.arguments, '{"command": "ls -a"}');

    const tree = await t.tree(r.id);
    assert.equal(tree.turns.length, 1);
    assert.equal(tree.turns[0].retries, 1);
    assert.equal(tree.turns[0].answer!.tool_calls![0].id, answer.tool_calls[0].id);
    checkAgainstPolicy(t, tree);
  });
});

Deno.test("pi re-serialised arguments and Codex re-keyed items extend the chain", async () => {
  await withGateway(async (t) => {
    // pi: sampled `{"command": "ls"}`, echoed `{"command":"ls"}`; text before the call ends in
    // an extra newline, which the parser keeps in the content so a re-render is identical.
    const pi = await t.rollout({ id: "pi-extend" });
    const piBody = fixtures.pi()[0].body;
    t.replies.push(
      `<think>\nI should run a command.\n</think>\n\nLet me look.\n\n<tool_call>\n` +
        `{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call><|im_end|>`,
    );
    const p0 = await chatTurn(t, pi, piBody);
    assert.equal(p0.tool_calls[0].function.arguments, '{"command": "ls"}');
    assert.equal(p0.content, "Let me look.\n");
    const echo = piEcho(p0);
    assert.equal(echo.tool_calls[0].function.arguments, '{"command":"ls"}');
    t.replies.push(answerText("I should answer now.", "Done: listed the directory."));
    await chatTurn(t, pi, {
      ...piBody,
      messages: [...piBody.messages, echo, {
        role: "tool",
        content: LS_OUTPUT,
        tool_call_id: p0.tool_calls[0].id,
      }],
    });
    let tree = await t.tree(pi.id);
    assert.deepEqual(tree.turns.map((x) => [x.mount, x.parent, x.chain, x.drift]), [
      ["root", null, 0, null],
      ["extend", tree.turns[0].id, 0, null],
    ]);
    assert.equal(tree.chains.length, 1);
    checkAgainstPolicy(t, tree);

    // Codex: `content: null` added to reasoning items, keys reordered, status/id echoed.
    const codex = await t.rollout({ id: "codex-extend" });
    const codexBody = fixtures.codex()[0].body;
    t.replies.push(
      toolCallText("I should run a command.", "exec_command", { cmd: "ls -a" }, "Running it."),
    );
    const items = await responsesTurn(t, codex, codexBody);
    assert.deepEqual(items.map((i: Json) => i.type), ["reasoning", "message", "function_call"]);
    const call = items[2];
    const echoed = codexEcho(items);
    assert.equal(echoed[0].content, null);
    assert.deepEqual(Object.keys(echoed[2]), [
      "type",
      "status",
      "id",
      "name",
      "arguments",
      "call_id",
    ]);
    t.replies.push(answerText("I should answer now.", "Done."));
    const { client_metadata, ...rest } = codexBody;
    await responsesTurn(t, codex, {
      ...rest,
      input: [...codexBody.input, ...echoed, {
        type: "function_call_output",
        id: "fco_01a202f7-97da-7173-bc2e-0db43418feec",
        call_id: call.call_id,
        output: `Chunk ID: 3b9e83\nWall time: 0.0000 seconds\nProcess exited with code 0\n` +
          `Original token count: 8\nOutput:\n${LS_OUTPUT}\n`,
      }],
      client_metadata: Object.fromEntries(Object.entries(client_metadata).reverse()),
    });
    tree = await t.tree(codex.id);
    assert.deepEqual(tree.turns.map((x) => [x.mount, x.parent, x.chain, x.drift]), [
      ["root", null, 0, null],
      ["extend", tree.turns[0].id, 0, null],
    ]);
    assert.equal(tree.chains.length, 1);
    checkAgainstPolicy(t, tree);
  });
});

/** Two parallel calls separated by `sep`; the Qwen3 template separates them with one newline. */
function twoCalls(sep: string): string {
  return callsText(
    "Two commands.",
    [["bash", { command: "ls" }], ["bash", { command: "pwd" }]],
    sep,
  );
}

async function driftRollout(t: TestGateway, r: RolloutHandle) {
  const body = fixtures.pi()[0].body;
  t.replies.push(twoCalls("\n\n"));
  const a0 = await chatTurn(t, r, body);
  assert.equal(a0.tool_calls.length, 2);
  t.replies.push(answerText("Both ran.", "Listed in /work."));
  await chatTurn(t, r, {
    ...body,
    messages: [
      ...body.messages,
      piEcho(a0),
      { role: "tool", content: "README.md", tool_call_id: a0.tool_calls[0].id },
      { role: "tool", content: "/work", tool_call_id: a0.tool_calls[1].id },
    ],
  });
  return await t.tree(r.id);
}

Deno.test("drift: a non-canonical separator is recorded with its position and trained, masked under drift=mask", async () => {
  await withGateway(async (t) => {
    const sampled = await t.model.tokenizer.encode(twoCalls("\n\n"));
    const canonical = await t.model.tokenizer.encode(twoCalls("\n"));
    const position = sampled.findIndex((id, i) => id !== canonical[i]);
    assert.ok(position > 0);
    assert.equal(await t.model.decode([sampled[position]]), "\n\n");

    const trained = await t.rollout({ id: "drift-default" });
    const tree = await driftRollout(t, trained);
    const [t0, t1] = tree.turns;
    assert.equal(t0.drift!.position, position);
    assert.deepEqual(t0.drift!.sampled, sampled.slice(position, position + 8));
    assert.deepEqual(t0.drift!.rendered, canonical.slice(position, position + 8));
    assert.equal(t1.drift, null);
    assert.equal(t1.mount, "extend", "the drifted ids stay in the next prompt verbatim");
    assert.deepEqual(t1.prompt_ids.slice(0, t0.prompt_ids.length + t0.output_ids.length), [
      ...t0.prompt_ids,
      ...t0.output_ids,
    ]);
    const [sample] = await t.finish(trained.id, 1);
    checkSample(sample, tree, () => true);
    assert.equal(sum(sample.loss_mask), sample.num_sampled, "every sampled id is trained");
    assert.deepEqual(sample.metadata.drift, [{ turn: t0.id, ...t0.drift }]);
    const file = await Deno.makeTempFile({ prefix: "rollgate-drift-", suffix: ".json" });
    try {
      await Deno.writeTextFile(file, JSON.stringify(await t.tree(trained.id)));
      const audit = await run(["audit", file]);
      assert.equal(audit.code, 0, audit.stderr);
      const records = auditRecords(audit.stdout);
      assert.match(
        records[0],
        new RegExp(
          `^${t0.id} \\[main\\].*; drift at output\\[${position}\\] \\(sampled ids kept\\)$`,
        ),
      );
      assert.match(records[1], /; extends parent verbatim$/);
      assert.match(records.at(-2)!, /^drift: .*sampled ids are kept verbatim.*trained/);
      assert.match(
        records.at(-1)!,
        /; 1 extend their parent verbatim, 0 do not; 1 with drift; 0 malformed tool calls \(in 0 turns, answered as text\); /,
      );
      const inspect = await run(["inspect", file]);
      assert.match(inspect.stdout, /drift at output\[\d+\] \(sampled ids kept\)/);
      assert.match(inspect.stdout.trimEnd().split("\n").at(-1)!, /^drift: /);
    } finally {
      await Deno.remove(file);
    }

    const masked = await t.rollout({ id: "drift-mask", labels: { drift: "mask" } });
    const tree2 = await driftRollout(t, masked);
    assert.equal(tree2.turns[0].drift!.position, position);
    const [sample2] = await t.finish(masked.id, 1);
    checkSample(sample2, tree2, (turn) => turn !== tree2.turns[0].id);
  });
});

async function piWithCompactionAndSide(t: TestGateway, r: RolloutHandle) {
  const body = fixtures.pi()[0].body;
  t.replies.push(toolCallText("I should run a command.", "bash", { command: "ls" }));
  const a0 = await chatTurn(t, r, body);
  t.replies.push(answerText("I should answer now.", "Done."));
  await chatTurn(t, r, {
    ...body,
    messages: [...body.messages, piEcho(a0), {
      role: "tool",
      content: LS_OUTPUT,
      tool_call_id: a0.tool_calls[0].id,
    }],
  });
  t.replies.push(answerText("Title.", "Probe listing"));
  await chatTurn(t, r, {
    model: body.model,
    stream: true,
    messages: [
      { role: "system", content: "Write a 3-word title for this conversation." },
      { role: "user", content: "Create probe.txt then list files" },
    ],
  });
  t.replies.push(answerText("Continue.", "Nothing left to do."));
  await chatTurn(t, r, {
    ...body,
    messages: [body.messages[0], {
      role: "user",
      content: "The conversation history before this point was compacted into the following " +
        "summary:\n<summary>\nListed the files: README.md and probe.txt.\n</summary>",
    }],
  });
}

Deno.test("reward modes: full gives every sample the reward, split divides it", async () => {
  await withGateway(async (t) => {
    const expected: [string, Record<string, unknown>, number | null, number | null][] = [
      ["reward-full", {}, 1, 1],
      ["reward-split", { reward_mode: "split" }, 1, 0.5],
      ["reward-split-none", { reward_mode: "split" }, null, null],
      ["reward-full-negative", { reward_mode: "full" }, -2, -2],
    ];
    for (const [id, spec, reward, each] of expected) {
      const r = await t.rollout({ id, ...spec });
      await piWithCompactionAndSide(t, r);
      const samples = await t.finish(r.id, reward);
      // The side chain is dropped and does not take a share.
      assert.deepEqual(samples.map((x) => x.branch), ["main", "compaction"], id);
      assert.deepEqual(samples.map((x) => x.reward), [each, each], id);
      const tree = await t.tree(r.id);
      assert.deepEqual(tree.chains.map((c) => c.label), ["main", "side", "compaction"]);
      assert.equal(tree.rollout.reward, reward);
    }
  });
});

Deno.test("SFT mask: exactly the tool outputs' content, filtered by tool name", async () => {
  await withGateway(async (t) => {
    const cases: [string, Record<string, unknown>, number, boolean][] = [
      ["sft-all", { sft: { weight: 0.25 } }, 0.25, true],
      ["sft-bash", { sft: { weight: 1, tools: ["Bash"] } }, 1, false],
    ];
    for (const [id, spec, weight, withAgent] of cases) {
      const r = await t.rollout({ id, ...spec });
      await claudeCodeSession(t, r);
      const samples = await t.finish(r.id, 1);
      const tree = await t.tree(r.id);
      const [sub, main, compaction] = samples;
      assert.deepEqual(samples.map((x) => x.branch), ["subagent", "main", "compaction"]);
      for (const x of samples) {
        assert.equal(x.sft_weight, weight);
        checkSample(x, tree, () => true);
      }
      await checkSft(t, sub, [LS_OUTPUT]);
      await checkSft(
        t,
        main,
        withAgent ? [`${SUB_REPORT}\n${AGENT_FOOTER}`, CAT_OUTPUT] : [CAT_OUTPUT],
      );
      await checkSft(t, compaction, []);
      // Outputs that end in a letter tokenize apart from the wrapping newline: exact match.
      const exact = runs(sub.sft_mask)[0];
      assert.equal(await t.model.decode(Array.from(sub.input_ids.slice(...exact))), LS_OUTPUT);
      const markers = t.model.toolResponseMarkers!;
      for (const x of samples) {
        for (const [a, b] of runs(x.sft_mask)) {
          assert.ok(!x.input_ids.slice(a, b).includes(markers.open));
          assert.ok(!x.input_ids.slice(a, b).includes(markers.close));
          assert.ok([markers.close, 198].includes(x.input_ids[b]), "run ends before scaffolding");
        }
      }
    }
  });
});

Deno.test("tree export shape and the sample stream of a finishing rollout", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "tree-shape", metadata: { task: "probe" } });
    await piWithCompactionAndSide(t, r);
    // The signal bounds the reads below too: a stream that never delivers fails the test.
    const stream = await fetch(`${t.url}/api/samples/stream`, {
      signal: AbortSignal.timeout(60_000),
    });
    assert.equal(stream.headers.get("content-type"), "application/x-ndjson");
    const samples = await t.finish(r.id, 1);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (text.split("\n").length <= samples.length) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    await reader.cancel();
    const streamed = text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    // Each line is the sample with its place in the stream.
    assert.deepEqual(streamed.map((s) => s.cursor), samples.map((_: unknown, i: number) => i + 1));
    assert.deepEqual(streamed.map(({ cursor: _, ...s }) => s), samples);

    const tree = await t.tree(r.id);
    assert.deepEqual(Object.keys(tree).sort(), [
      "chains",
      "format",
      "rollout",
      "shared_prefix",
      "turns",
    ]);
    assert.equal(tree.format, "rollgate.tree.v1");
    assert.equal(tree.rollout.id, r.id);
    assert.equal(tree.rollout.status, "finished");
    assert.deepEqual(tree.rollout.metadata, { task: "probe" });
    assert.deepEqual(tree.rollout.turns, { total: 4, done: 4, pending: 0, failed: 0 });
    assert.deepEqual(tree.chains.map((c) => Object.keys(c).sort()), [
      ["evidence", "id", "label", "parent", "root"],
      ["evidence", "id", "label", "parent", "root"],
      ["evidence", "id", "label", "parent", "root"],
    ]);
    for (const turn of tree.turns) {
      assert.deepEqual(Object.keys(turn).sort(), [
        "answer",
        "black_box",
        "branch",
        "bridge_ids",
        "chain",
        "drift",
        "error",
        "facts",
        "finish_reason",
        "id",
        "index",
        "logprobs",
        "malformed_tool_calls",
        "messages",
        "mount",
        "output_ids",
        "parent",
        "prompt_ids",
        "protocol",
        "rendered_messages",
        "retries",
        "session",
        "special_text",
        "status",
        "timings",
        "tool_spans",
        "tools",
        "weight_version",
      ]);
      assert.equal(turn.status, "done");
      assert.equal(turn.branch, tree.chains[turn.chain].label);
    }
    assert.equal(tree.turns[1].tool_spans.length, 1);
    assert.equal(tree.turns[1].tool_spans[0].tool_call_id, tree.turns[0].answer!.tool_calls![0].id);

    // The shared-prefix export holds every turn's added ids once; chains re-assemble prompts.
    const sp = tree.shared_prefix;
    assert.equal(sp.rollout_id, r.id);
    assert.equal(sp.nodes.length, tree.turns.length);
    assert.equal(sp.tokens.length, sp.sampled.length);
    assert.equal(sp.tokens.length, sp.logprobs.length);
    let cursor = 0;
    for (const [k, node] of sp.nodes.entries()) {
      const turn = tree.turns[k];
      assert.equal(node.turn, turn.id);
      assert.equal(node.parent, turn.parent);
      assert.equal(node.branch, turn.branch);
      assert.equal(node.context[0], cursor);
      assert.equal(node.context[1], node.output[0]);
      cursor = node.output[1];
      assert.deepEqual(sp.tokens.slice(...node.output), turn.output_ids);
      assert.deepEqual(sp.logprobs.slice(...node.output), Array.from(turn.logprobs!));
      assert.ok(sp.sampled.slice(...node.output).every((s) => s === 1));
      assert.ok(sp.sampled.slice(...node.context).every((s) => s === 0));
      const parentIds = node.parent === null ? [] : (() => {
        const p = tree.turns.find((x) => x.id === node.parent)!;
        return [...p.prompt_ids, ...p.output_ids];
      })();
      assert.deepEqual([...parentIds, ...sp.tokens.slice(...node.context)], turn.prompt_ids);
    }
    assert.equal(cursor, sp.tokens.length);
    assert.deepEqual(turnsOf(tree, 0).map((x) => x.mount), ["root", "extend"]);
  });
});

/** Audit output, one record per turn (a differing turn continues on indented lines). */
function auditRecords(stdout: string): string[] {
  return stdout.trimEnd().split("\n").reduce<string[]>((acc, l) => {
    if (l.startsWith("    ")) acc[acc.length - 1] += "\n" + l;
    else acc.push(l);
    return acc;
  }, []);
}

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", "main.ts", ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
  };
}

Deno.test("main.ts inspect and audit read an exported tree", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-tree-" });
  try {
    await withGateway(async (t) => {
      const r = await t.rollout({ id: "cc-cli" });
      await claudeCodeSession(t, r);
      const samples = await t.finish(r.id, 1);
      const tree = await t.tree(r.id);
      const file = `${dir}/tree.json`;
      await Deno.writeTextFile(file, JSON.stringify(tree));
      const both = `${dir}/tree-and-samples.json`;
      await Deno.writeTextFile(both, JSON.stringify({ tree, samples }));

      const inspect = await run(["inspect", file]);
      assert.equal(inspect.code, 0, inspect.stderr);
      const lines = inspect.stdout.trimEnd().split("\n");
      assert.equal(lines[0], "rollout cc-cli (finished, reward 1): 4 chains, 7 turns");
      const chainLines = lines.filter((l) => l.startsWith("chain "));
      assert.deepEqual(chainLines, [
        `chain 0 main: ${JSON.stringify(tree.chains[0].evidence)}`,
        `chain 1 subagent ← chain 0: ${JSON.stringify(tree.chains[1].evidence)}`,
        `chain 2 side: ${JSON.stringify(tree.chains[2].evidence)}`,
        `chain 3 compaction ← chain 0: ${JSON.stringify(tree.chains[3].evidence)}`,
      ]);
      for (const turn of tree.turns) {
        const line = lines.find((l) => l.startsWith(`  ${turn.id} `));
        assert.ok(line, `no line for ${turn.id}`);
        assert.ok(
          line.startsWith(
            `  ${turn.id} ${turn.mount} done: prompt ${turn.prompt_ids.length} ids ` +
              `(${turn.rendered_messages} messages rendered), output ${turn.output_ids.length} ids`,
          ),
          line,
        );
      }
      assert.match(lines.find((l) => l.startsWith(`  ${tree.turns[0].id}`))!, /calls Agent$/);
      assert.ok(!lines.some((l) => l.startsWith("sample ")));

      const withSamples = await run(["inspect", both]);
      assert.equal(withSamples.code, 0, withSamples.stderr);
      const sampleLines = withSamples.stdout.split("\n").filter((l) => l.startsWith("sample "));
      assert.equal(sampleLines.length, 3);
      assert.match(sampleLines[0], /^sample 0 subagent chain 1: \d+ ids, \d+ with loss \[/);

      const audit = await run(["audit", file]);
      assert.equal(audit.code, 0, audit.stderr + audit.stdout);
      const records = auditRecords(audit.stdout);
      assert.equal(records.length, tree.turns.length + 1);
      for (const turn of tree.turns) {
        const line = records.find((l) => l.startsWith(`${turn.id} [${turn.branch}]`));
        assert.ok(line, `no audit line for ${turn.id}`);
        if (turn.mount === "extend") assert.match(line, /; extends parent verbatim$/);
        else assert.doesNotMatch(line, /extend/);
      }
      // Tool arguments echoed compactly differ from the sampled spacing only inside kept ids.
      assert.equal(
        records.at(-1),
        `cc-cli: 7 turns; 4 equal a full render, 3 differ only inside earlier turns' ` +
          `generation prompts and kept sampled ids, ` +
          `0 differ elsewhere; 3 extend their parent verbatim, 0 do not; 0 with drift; ` +
          "0 malformed tool calls (in 0 turns, answered as text); " +
          `0 rewrite, 0 retry forks; 0 rerender chains; 0 special-token texts in content`,
      );

      // A tampered export fails the audit.
      const bad = structuredClone(tree);
      bad.turns[3].prompt_ids[bad.turns[0].prompt_ids.length + 2] += 1;
      await Deno.writeTextFile(file, JSON.stringify(bad));
      const failed = await run(["audit", file]);
      assert.equal(failed.code, 1);
      const broken = auditRecords(failed.stdout);
      for (const k of [3, 4]) {
        const record = broken.find((l) => l.startsWith(`${bad.turns[k].id} [main]`))!;
        assert.match(record, /; DOES NOT extend parent$/);
      }
      assert.match(broken.at(-1)!, /; 1 extend their parent verbatim, 2 do not; /);
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a second side request with the same system prompt is side, not a compaction", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "cc-two-sides" });
    t.replies.push(answerText("The user wants a file.", "I will create it."));
    await anthropicTurn(t, r, mainBody());
    t.replies.push(answerText("Title.", '{"title": "Create a probe file"}'));
    await anthropicTurn(t, r, titleBody());
    t.replies.push(answerText("Title.", '{"title": "List the files"}'));
    await anthropicTurn(t, r, {
      ...titleBody(),
      messages: [{ role: "user", content: "Now list the files" }],
    });
    const tree = await t.tree(r.id);
    assert.deepEqual(tree.chains.map((c) => [c.label, c.parent]), [
      ["main", null],
      ["side", null],
      ["side", null],
    ]);
    const samples = await t.finish(r.id, 1);
    assert.deepEqual(samples.map((x) => x.branch), ["main"], "side requests are not trained");
  });
});

Deno.test("gateway-wide sample options apply; a rollout overrides them label by label", async () => {
  await withGateway(async (t) => {
    // Gateway: side chains train, rewards split. Rollout b only changes the drift action.
    const a = await t.rollout({ id: "defaults" });
    const b = await t.rollout({ id: "override", labels: { drift: "train" }, reward_mode: "full" });
    for (const r of [a, b]) await piWithCompactionAndSide(t, r);
    const [sa, sb] = [await t.finish(a.id, 1), await t.finish(b.id, 1)];
    assert.deepEqual(sa.map((x) => [x.branch, x.metadata.label_action, x.reward]), [
      ["main", "train", 1 / 3],
      ["side", "train", 1 / 3],
      ["compaction", "train", 1 / 3],
    ]);
    assert.deepEqual(sb.map((x) => [x.branch, x.metadata.label_action, x.reward]), [
      ["main", "train", 1],
      ["side", "train", 1],
      ["compaction", "train", 1],
    ]);
    for (const x of sa) assert.equal(x.sft_weight, 0.5);
  }, { sampleOptions: { labels: { side: "train" }, rewardMode: "split", sftWeight: 0.5 } });
});
