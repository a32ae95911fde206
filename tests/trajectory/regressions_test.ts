/**
 * Regression tests for defects found in real CLI sessions through the gate, each named after what
 * broke. Through the real gateway over HTTP; the scripted policy (TEST DOUBLE of the trainer)
 * answers with real Qwen3 ids.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  auditTree,
  formatAudit,
  formatTree,
  rolloutFromTree,
  type Sample,
} from "../../trajectory/mod.ts";
import { answerText } from "../support/scripted_policy.ts";
import { escapeScript } from "../e2e/capture_claude_code.ts";
import { mainBody } from "./claude_code_session.ts";
import {
  anthropicTurn,
  chatTurn,
  fixtures,
  type Json,
  outputRanges,
  piEcho,
  sum,
  toolUses,
  type TreeResponse,
  withGateway,
} from "./agent_clients.ts";

/**
 * Every sampled id of the rollout has loss 1 in exactly one sample (all chains here train), and
 * no id before a sample's `trained_from` carries loss.
 */
function assertTrainedOnce(samples: Sample[], tree: TreeResponse): void {
  const trained = new Map<string, number>();
  for (const s of samples) {
    assert.equal(sum(s.loss_mask, [0, s.trained_from]), 0, "no loss before trained_from");
    for (const { turn, range } of outputRanges(s, tree)) {
      const loss = sum(s.loss_mask, range);
      if (loss === 0) continue;
      assert.equal(loss, range[1] - range[0], `turn ${turn}: all or none of its ids trained`);
      trained.set(turn, (trained.get(turn) ?? 0) + 1);
    }
  }
  for (const t of tree.turns.filter((x) => x.status === "done")) {
    assert.equal(trained.get(t.id), 1, `turn ${t.id} is trained in exactly one sample`);
  }
}

Deno.test("regression: a compact tool call (drift) is trained, not masked", async () => {
  await withGateway(async (t) => {
    // A plain two-turn pi task whose policy writes its call as compact JSON; the Qwen3 template
    // would render `{"name": "bash", "arguments": {"command": "ls"}}`.
    const compact = '<think>\nList.\n</think>\n\n<tool_call>\n{"name":"bash","arguments":' +
      '{"command":"ls"}}\n</tool_call><|im_end|>';
    const r = await t.rollout({ id: "compact-call" });
    const body = fixtures.pi()[0].body;
    t.replies.push(compact, answerText("Seen.", "Two files."));
    const a0 = await chatTurn(t, r, body);
    assert.equal(a0.tool_calls[0].function.arguments, '{"command":"ls"}');
    await chatTurn(t, r, {
      ...body,
      messages: [...body.messages, piEcho(a0), {
        role: "tool",
        content: "README.md\nprobe.txt",
        tool_call_id: a0.tool_calls[0].id,
      }],
    });
    const tree = await t.tree(r.id);
    const [t0, t1] = tree.turns;
    assert.ok(t0.drift, "the compact call is drift");
    assert.equal(t1.parent, t0.id, "its sampled ids are the next prompt's, verbatim");
    const [sample] = await t.finish(r.id);
    assert.equal(sample.num_sampled, t0.output_ids.length + t1.output_ids.length);
    assert.equal(sum(sample.loss_mask), sample.num_sampled, "every sampled id is trained");
    assert.deepEqual(sample.metadata.drift, [{ turn: t0.id, ...t0.drift }]);
    assertTrainedOnce([sample], tree);
  });
});

/** Replaces the recorded tool-use ids in a request with the ones this run's answers carry. */
function withIds(body: Json, ids: Record<string, string>): Json {
  let text = JSON.stringify(body);
  for (const [recorded, live] of Object.entries(ids)) text = text.replaceAll(recorded, live);
  return JSON.parse(text);
}

Deno.test("regression: Claude Code's decoded \\uXXXX tool input (recorded request) is a rewrite branch, its shared prefix trained once", async () => {
  await withGateway(async (t) => {
    const [req1, req2, req3] = fixtures.claudeCodeUnicodeEscape();
    const headers = { "x-claude-code-session-id": req1.headers["x-claude-code-session-id"] };
    const recorded = req3.body.messages.flatMap((m: Json) =>
      m.role === "assistant" ? toolUses({ content: m.content } as Json) : []
    );
    // What the client sent back: the escape text decoded.
    assert.equal(recorded[1].input.command, "echo 'café' > cafe.txt");

    const r = await t.rollout({ id: "unicode-escape" });
    for (const results of ["", "</tool_response>", "</tool_response></tool_response>"]) {
      t.replies.push(escapeScript({ text: results }));
    }
    const a1 = await anthropicTurn(t, r, req1.body, headers);
    const id1 = toolUses(a1)[0].id;
    const a2 = await anthropicTurn(t, r, withIds(req2.body, { [recorded[0].id]: id1 }), headers);
    assert.equal(toolUses(a2)[0].input.command, "echo 'caf\\u00e9' > cafe.txt");
    await anthropicTurn(
      t,
      r,
      withIds(req3.body, { [recorded[0].id]: id1, [recorded[1].id]: toolUses(a2)[0].id }),
      headers,
    );

    const tree = await t.tree(r.id);
    const [t0, t1, t2] = tree.turns;
    assert.deepEqual(tree.turns.map((x) => [x.chain, x.parent, x.mount]), [
      [0, null, "root"],
      [0, t0.id, "extend"],
      [1, t0.id, "extend"],
    ]);
    assert.deepEqual(tree.chains.map((c) => [c.label, c.parent]), [["main", null], [
      "rewrite",
      0,
    ]]);
    assert.deepEqual(tree.chains[1].evidence, {
      reason: "the history departs from the chain after a recorded turn",
      base_turn: t0.id,
      replaced_turn: t1.id,
      message_index: 4,
      role: "assistant",
      path: "tool_calls[0].arguments.command",
      recorded: "echo 'caf\\u00e9' > cafe.txt",
      received: "echo 'café' > cafe.txt",
    });
    assert.equal(t2.session, headers["x-claude-code-session-id"]);

    const samples = await t.finish(r.id);
    assert.deepEqual(
      samples.map((s) => [s.branch, s.turns, s.parent]),
      [["main", [t0.id, t1.id], null], ["rewrite", [t0.id, t2.id], { chain: 0, turn: t0.id }]],
    );
    assert.equal(samples[0].trained_from, 0);
    assert.equal(samples[1].trained_from, t0.prompt_ids.length + t0.output_ids.length);
    assertTrainedOnce(samples, tree);

    // Read back from a saved tree (what the viewer and `inspect` do), the samples are the same.
    const { shared_prefix: _, ...saved } = await t.tree(r.id);
    const reread = rolloutFromTree(JSON.parse(JSON.stringify(saved))).samples();
    assert.deepEqual(JSON.parse(JSON.stringify(reread)), samples);

    const audit = formatAudit(await auditTree(t.model, tree));
    assert.match(
      audit,
      new RegExp(
        `\\n    rewrite of chain 0 after turn ${t0.id}: message 4 \\(assistant\\) ` +
          `tool_calls\\[0\\]\\.arguments\\.command: recorded "echo 'caf\\\\\\\\u00e9' > cafe.txt" ` +
          `→ received "echo 'café' > cafe.txt"; shared prefix trained in chain 0\\n`,
      ),
    );
    assert.match(audit, /; 1 rewrite, 0 retry forks; /);
    // `inspect` says where the fork's training starts and which chain trains what comes before.
    const view = formatTree(tree, samples).split("\n");
    assert.match(view.find((l) => l.startsWith("chain 1 rewrite ← chain 0: "))!, /"base_turn"/);
    assert.match(
      view.find((l) => l.startsWith("sample 1 rewrite chain 1: "))!,
      new RegExp(`, trained from ${samples[1].trained_from} \\(before: shared with chain 0\\)`),
    );
  });
});

Deno.test("regression: a second session with an identical first request gets a fresh sample, not a replay", async () => {
  await withGateway(async (t) => {
    const r = await t.rollout({ id: "two-sessions" });
    const first = { "x-claude-code-session-id": "11111111-aaaa-4aaa-8aaa-000000000001" };
    const second = { "x-claude-code-session-id": "22222222-bbbb-4bbb-8bbb-000000000002" };
    t.replies.push(answerText("First run.", "ONE"), answerText("Second run.", "TWO"));
    const a = await anthropicTurn(t, r, mainBody(), first);
    const b = await anthropicTurn(t, r, mainBody(), second);
    const texts = [a, b].map((x) => x.content.flatMap((c) => c.type === "text" ? [c.text] : []));
    assert.deepEqual(texts, [["ONE"], ["TWO"]], "the second session got its own answer");
    // Re-sends within a session, and re-sends naming no session, are retries: replayed.
    assert.deepEqual(await anthropicTurn(t, r, mainBody(), second), b);
    await anthropicTurn(t, r, mainBody());

    const tree = await t.tree(r.id);
    assert.equal(tree.turns.length, 2);
    assert.deepEqual(tree.turns.map((x) => [x.session, x.retries]), [
      [first["x-claude-code-session-id"], 0],
      [second["x-claude-code-session-id"], 2],
    ]);
    assert.deepEqual(tree.chains.map((c) => [c.label, c.parent]), [["main", null], ["retry", 0]]);
    assert.equal(tree.chains[1].evidence.retried_turn, tree.turns[0].id);
    const samples = await t.finish(r.id);
    assert.deepEqual(samples.map((s) => [s.branch, s.trained_from]), [["main", 0], ["retry", 0]]);
    assertTrainedOnce(samples, tree);
  });
});
