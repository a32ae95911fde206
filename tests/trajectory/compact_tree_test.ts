/**
 * The compact tree export (`GET /api/rollouts/:id/tree?form=compact`): every id once with per-turn
 * ranges, every message node and tools array once, and expanded it is exactly the full export, on
 * generated conversations (branches, retries, bridges, missing logprobs) after a JSON round trip,
 * and over HTTP on a real socket with a history edit (tool arguments echoed re-serialized).
 *
 * Real Qwen3 tokenizer and template; generation by the in-memory backend TEST DOUBLE.
 */
import assert from "node:assert/strict";
import { PolicyModel } from "../../model/mod.ts";
import {
  type CompactTreeExport,
  compactTurnTree,
  expandCompactTree,
  turnTree,
} from "../../trajectory/mod.ts";
import { generateConversations } from "../invariants/conversation_generator.ts";
import { driveConversation } from "../invariants/drive.ts";
import { toolCallText } from "../../runner/mod.ts";
import { agentCall, startGateway } from "../api/loopback_gateway.ts";

const TOOLS = [{
  type: "function",
  function: {
    name: "bash",
    description: "Run a command.",
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
}];

const model = await PolicyModel.load();

Deno.test("compact tree export: ids once, and it expands to the full export", async () => {
  let saved = 0;
  for (const g of generateConversations(7100, 12)) {
    const c = await driveConversation(model, g, {
      stripEndOfTurn: (k) => g.seed % 3 === 0 && k % 2 === 1,
      logprobs: g.seed % 4 !== 1,
    });
    const full = turnTree(c.rollout);
    const compact = compactTurnTree(c.rollout);
    const wire = JSON.parse(JSON.stringify(compact)) as CompactTreeExport;
    assert.deepStrictEqual(expandCompactTree(wire), JSON.parse(JSON.stringify(full)));

    const held = c.rollout.turns.reduce(
      (n, t) => n + t.bridgeIds.length + t.deltaIds.length + t.outputIds.length,
      0,
    );
    assert.equal(compact.tokens.length, held, "each turn's ids appear once");
    const repeated = full.turns.reduce((n, t) => n + t.prompt_ids.length + t.output_ids.length, 0);
    assert.ok(compact.tokens.length <= repeated);
    saved += repeated - compact.tokens.length;
    const distinct = new Set(c.rollout.turns.flatMap((t) => {
      const path = [];
      for (let n: typeof t.history | null = t.history; n && n.depth > 0; n = n.parent) path.push(n);
      return path;
    }));
    assert.equal(compact.messages.length, distinct.size, "each message node appears once");
    for (const t of compact.turns) {
      assert.equal(t.context[1], t.output[0], `${t.id}: output follows its context`);
      assert.ok(t.bridge <= t.context[1] - t.context[0]);
    }
  }
  assert.ok(saved > 0, "multi-turn conversations repeat their history in the full export");
});

Deno.test("GET /api/rollouts/:id/tree?form=compact over HTTP; an unknown form is a 400", async () => {
  const gw = await startGateway({ model });
  try {
    const r = await gw.rollout();
    /** One agent turn over Chat, answered by this test as the trainer with `outputIds`. */
    const turn = async (messages: unknown[], outputIds: number[]) => {
      const agent = agentCall(gw, r, "chat/completions", { model: "m", messages, tools: TOOLS });
      const next = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
      assert.equal(next.status, 200, JSON.stringify(next.json));
      const done = await gw.api("POST", `/requests/${next.json.request_id}/complete`, {
        output_ids: outputIds,
        logprobs: outputIds.map((_, i) => -i / 64),
        finish_reason: "stop",
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
      const answer = await agent; // `call` bounds the wait (10 s)
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      return answer.json.choices[0].message;
    };
    const history: Record<string, unknown>[] = [{ role: "user", content: "List the files" }];
    const sampled = toolCallText("Look first.", "bash", { command: "ls -la" });
    const call = await turn(history, await model.tokenizer.encode(sampled)); // ends with <|im_end|>
    assert.equal(call.tool_calls.length, 1, JSON.stringify(call));
    // The agent echoes the call with its arguments re-serialized: the turn records an edit.
    const args = call.tool_calls[0].function.arguments;
    call.tool_calls[0].function.arguments = JSON.stringify(JSON.parse(args), null, 2);
    assert.notEqual(call.tool_calls[0].function.arguments, args);
    history.push(call, { role: "tool", tool_call_id: call.tool_calls[0].id, content: "a\nb" });
    await turn(history, [9707, 151645]); // "Hello" <|im_end|>

    const full = await gw.api("GET", `/rollouts/${r.id}/tree`);
    const compact = await gw.api("GET", `/rollouts/${r.id}/tree?form=compact`);
    assert.equal(compact.status, 200, JSON.stringify(compact.json));
    assert.equal(compact.json.format, "rollgate.tree.compact.v1");
    assert.equal(compact.json.turns.length, 2);
    assert.equal(compact.json.turns[1].history_edits.length, 1, "the re-serialized call");
    assert.equal(compact.json.tool_sets.length, 1);
    const { shared_prefix: _, ...tree } = full.json;
    assert.deepStrictEqual(expandCompactTree(compact.json), tree);
    assert.deepEqual(compact.json.tokens.slice(-2), [9707, 151645]);

    const bad = await gw.api("GET", `/rollouts/${r.id}/tree?form=tiny`);
    assert.equal(bad.status, 400, JSON.stringify(bad.json));
  } finally {
    await gw.close();
  }
});
