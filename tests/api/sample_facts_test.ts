/**
 * Issue 24 over real HTTP through the gate: groups, sampling facts, weight versions per appended
 * chunk, the staleness bound and MoE routing rows (`routed_experts_from` in `requests/next`,
 * `routed_experts` on `complete`, checked, kept and handed back in every sample form). The
 * trainer is this test; its routing rows come from the `expertOf` TEST DOUBLE rule, so a row at
 * the wrong position shows.
 */
import assert from "node:assert/strict";
import { idsFromBase64 } from "../../gateway/mod.ts";
import { encodeTokenRows, InterceptionGate } from "../../generation/mod.ts";
import { SqliteJournal } from "../../journal/mod.ts";
import {
  checkRoutingRows,
  expandCalls,
  expandTree,
  expertRows,
} from "../support/sample_facts_check.ts";
import {
  agentCall,
  READ_FILE_TOOL,
  take,
  type TestGateway,
  withGateway,
} from "./loopback_gateway.ts";

const SHAPE = { layers: 2, topK: 3 };
const tools = [{ type: "function", function: READ_FILE_TOOL }];
const USER = { role: "user", content: "Read the README." };

async function encode(gw: TestGateway, text: string) {
  return await gw.gw.model.tokenizer.encode(text);
}

/** The two-turn exchange: a tool call, then (after its result) an answer. */
function secondRequest(
  first: { json: { choices: { message: { tool_calls: { id: string }[] } }[] } },
) {
  const message = first.json.choices[0].message;
  return {
    model: "m",
    tools,
    messages: [USER, message, {
      role: "tool",
      tool_call_id: message.tool_calls[0].id,
      content: "# hello",
    }],
  };
}

const CALL =
  '<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call><|im_end|>';

/** The first sample of `GET /api/samples/stream` (JSON Lines). */
async function firstLogged(url: string) {
  const res = await fetch(`${url}/api/samples/stream?after=0`);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) text += (await reader.read()).value ?? "";
  await reader.cancel();
  return JSON.parse(text.split("\n")[0]);
}

Deno.test("routing, versions and sampling facts go from complete into every sample form", async () => {
  const gate = new InterceptionGate();
  await withGateway({ requests: gate }, async (gw) => {
    const r = await gw.rollout({
      group: "task-7",
      sampling: { temperature: 0.7, top_p: 0.95, top_k: 20 },
    });
    const agent1 = agentCall(gw, r, "chat/completions", { model: "m", tools, messages: [USER] });
    const p1 = await take(gw, r.id);
    assert.equal(p1.routed_experts_from, 0, "a chain's first turn has no routing yet");
    const out1 = await encode(gw, CALL);
    const rows1 = expertRows(SHAPE, p1.prompt_ids, out1, 0);
    const T = rows1.shape[0];
    assert.equal(T, p1.prompt_ids.length + out1.length - 1);
    const complete = (body: Record<string, unknown>) =>
      gw.api("POST", `/requests/${p1.request_id}/complete`, {
        output_ids: out1,
        finish_reason: "stop",
        ...body,
      });
    const wire = encodeTokenRows(rows1);
    // Malformed rows are a 400 that says what was expected, and change nothing.
    const bad: [unknown, RegExp][] = [
      [{ ...wire, shape: [T - 1, 2, 3] }, new RegExp(`must have ${T} rows`)],
      [{ ...wire, dtype: "float32" }, /dtype must be one of uint8, uint16, int32/],
      [{ ...wire, data: "%%%%" }, /data must be base64/],
      [{ ...wire, data: wire.data.slice(4) }, new RegExp(`must hold ${T * 6} bytes`)],
      [{ ...wire, shape: [T, 300, 3] }, /past the gateway's limit/],
      [{ dtype: "uint8", shape: [T, 2] }, /invalid completion: routed_experts/],
    ];
    for (const [routed_experts, message] of bad) {
      const res = await complete({ routed_experts });
      assert.equal(res.status, 400, JSON.stringify(res.json));
      assert.match(res.json.error.message, message);
    }
    assert.equal(gate.stateOf(p1.request_id), "delivered", "still pending, untouched");
    const ok = await complete({
      routed_experts: wire,
      weight_version: 3,
      logprobs_mode: "processed",
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const first = await agent1;
    assert.equal(first.status, 200, JSON.stringify(first.json));

    // Turn 2: rows from where turn 1's ended; a weight update falls between two chunks.
    const agent2 = agentCall(gw, r, "chat/completions", secondRequest(first));
    const p2 = await take(gw, r.id);
    assert.equal(p2.routed_experts_from, p1.prompt_ids.length + out1.length - 1);
    const out2 = await encode(gw, "The README says hello.<|im_end|>");
    const chunk = out2.slice(0, 3);
    const appended = await gw.api("POST", `/requests/${p2.request_id}/append`, {
      output_ids: chunk,
      weight_version: 4,
    });
    assert.equal(appended.status, 200, JSON.stringify(appended.json));
    const rows2 = expertRows(SHAPE, p2.prompt_ids, out2, p2.routed_experts_from);
    const other = encodeTokenRows(
      expertRows({ layers: 2, topK: 2 }, p2.prompt_ids, out2, p2.routed_experts_from),
    );
    const refused = await gw.api("POST", `/requests/${p2.request_id}/complete`, {
      output_ids: out2,
      finish_reason: "stop",
      routed_experts: other,
    });
    assert.equal(refused.status, 400);
    assert.match(refused.json.error.message, /must keep the chain's uint8 rows of \[2, 3\]/);
    const done2 = await gw.api("POST", `/requests/${p2.request_id}/complete`, {
      output_ids: out2,
      finish_reason: "stop",
      weight_version: 5,
      routed_experts: encodeTokenRows(rows2),
    });
    assert.equal(done2.status, 200, JSON.stringify(done2.json));
    assert.equal((await agent2).status, 200);

    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1, weight_version: 5 });
    assert.equal(fin.status, 200, JSON.stringify(fin.json));
    const [s] = fin.json.samples;
    assert.equal(s.group, "task-7");
    const input = [...p2.prompt_ids, ...out2];
    assert.deepEqual(s.input_ids, input);
    checkRoutingRows(s.routed_experts, input, "flat sample");
    assert.deepEqual(s.version_span, [3, 5]);
    const [span1, span2] = s.turn_spans;
    assert.deepEqual(span1.sampling, {
      temperature: 0.7,
      top_p: 0.95,
      top_k: 20,
      logprobs_mode: "processed",
    });
    assert.equal(span1.weight_version, 3);
    assert.equal(span1.output_start, p1.prompt_ids.length);
    assert.equal(span2.output_start, p2.prompt_ids.length);
    assert.deepEqual(span2.weight_versions, [[span2.output_start, 4], [span2.output_start + 3, 5]]);
    assert.equal(span2.weight_version, 4, "a turn's version is its first sampled id's");
    assert.equal(span2.sampling.logprobs_mode, null, "not reported for turn 2");
    const summary = await gw.api("GET", `/rollouts/${r.id}`);
    assert.equal(summary.json.group, "task-7");

    // The tree and calls forms expand to the flat sample, in both id transports.
    const flat = {
      input_ids: s.input_ids,
      loss_mask: s.loss_mask,
      logprobs: s.logprobs,
      sft_mask: s.sft_mask,
      routed_experts: s.routed_experts,
    };
    const tree = await gw.api("GET", `/rollouts/${r.id}/samples?form=tree`);
    assert.equal(tree.status, 200, JSON.stringify(tree.json));
    assert.equal(tree.json.segments.length, 2);
    assert.deepEqual(expandTree(tree.json), [flat]);
    const calls = await gw.api("GET", `/rollouts/${r.id}/samples?form=calls`);
    assert.deepEqual(calls.json.calls.map((c: { prompt_ids: number[] }) => c.prompt_ids), [
      p1.prompt_ids,
      p2.prompt_ids,
    ]);
    assert.deepEqual(expandCalls(calls.json), [flat]);
    const compact = await gw.api("GET", `/rollouts/${r.id}/samples?form=tree&ids=base64`);
    assert.equal(compact.json.ids_encoding, "base64");
    assert.deepEqual(
      Array.from(idsFromBase64(compact.json.segments[1].input_ids)),
      tree.json.segments[1].input_ids,
    );
    const wrong = await gw.api("GET", `/rollouts/${r.id}/samples?form=trie`);
    assert.equal(wrong.status, 400);
    assert.match(wrong.json.error.message, /form must be one of flat, tree, calls/);
  });
});

Deno.test("staleness: turns older than max_staleness at finish carry no loss; the reward counts", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout({ max_staleness: 1 });
    const answer = async (version: number, body: unknown, text: string) => {
      const agent = agentCall(gw, r, "chat/completions", body);
      const p = await take(gw, r.id);
      const res = await gw.api("POST", `/requests/${p.request_id}/complete`, {
        output_ids: await encode(gw, text),
        finish_reason: "stop",
        weight_version: version,
      });
      assert.equal(res.status, 200, JSON.stringify(res.json));
      return await agent;
    };
    const first = await answer(1, { model: "m", tools, messages: [USER] }, CALL);
    await answer(3, secondRequest(first), "Hello.<|im_end|>");
    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 0.5 });
    const [s] = fin.json.samples;
    assert.equal(s.reward, 0.5, "the reward still counts");
    const [old, fresh] = s.turn_spans;
    assert.equal(old.stale, true);
    assert.equal(old.trained, false);
    assert.equal(fresh.stale, undefined);
    assert.equal(fresh.trained, true);
    assert.ok(s.loss_mask.slice(old.output_start, old.end).every((x: number) => x === 0));
    assert.ok(s.loss_mask.slice(fresh.output_start, fresh.end).every((x: number) => x === 1));
    assert.deepEqual(s.metadata.stale_turns, [old.turn]);
    assert.equal(
      s.metadata.reference_version,
      3,
      "the newest version seen, when finish names none",
    );
    assert.equal(s.metadata.routed_experts_absent, undefined, "no routing was sent at all");
    assert.equal(s.routed_experts, undefined);
  });
});

Deno.test("a sample without rows for every position has none, and says why", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout();
    const agent1 = agentCall(gw, r, "chat/completions", { model: "m", tools, messages: [USER] });
    const p1 = await take(gw, r.id);
    const out1 = await encode(gw, CALL);
    await gw.api("POST", `/requests/${p1.request_id}/complete`, {
      output_ids: out1,
      finish_reason: "stop",
      routed_experts: encodeTokenRows(expertRows(SHAPE, p1.prompt_ids, out1, 0)),
    });
    const agent2 = agentCall(gw, r, "chat/completions", secondRequest(await agent1));
    const p2 = await take(gw, r.id);
    await gw.api("POST", `/requests/${p2.request_id}/complete`, {
      output_ids: await encode(gw, "Hello.<|im_end|>"),
      finish_reason: "stop",
    });
    await agent2;
    const got = await gw.api("GET", `/rollouts/${r.id}/samples`);
    const [s] = got.json.samples;
    assert.equal(s.routed_experts, undefined);
    assert.match(s.metadata.routed_experts_absent, /has no routed_experts/);
  });
});

Deno.test("restart from the journal: rows, facts and group come back from SQLite; logged samples stream them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-rows-" });
  try {
    const journal = new SqliteJournal(dir);
    let before: unknown, streamed: unknown;
    let id = "";
    await withGateway({ journal }, async (gw) => {
      const r = await gw.rollout({ group: "g", sampling: { temperature: 1 } });
      id = r.id;
      const agent1 = agentCall(gw, r, "chat/completions", { model: "m", tools, messages: [USER] });
      const p1 = await take(gw, r.id);
      const out1 = await encode(gw, CALL);
      await gw.api("POST", `/requests/${p1.request_id}/complete`, {
        output_ids: out1,
        finish_reason: "stop",
        weight_version: 2,
        routed_experts: encodeTokenRows(expertRows(SHAPE, p1.prompt_ids, out1, 0)),
      });
      const agent2 = agentCall(gw, r, "chat/completions", secondRequest(await agent1));
      const p2 = await take(gw, r.id);
      const out2 = await encode(gw, "Hello.<|im_end|>");
      await gw.api("POST", `/requests/${p2.request_id}/complete`, {
        output_ids: out2,
        finish_reason: "stop",
        weight_version: 2,
        routed_experts: encodeTokenRows(
          expertRows(SHAPE, p2.prompt_ids, out2, p2.routed_experts_from),
        ),
      });
      await agent2;
      const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
      before = (await gw.api("GET", `/rollouts/${r.id}/samples?form=tree`)).json;
      streamed = fin.json.samples;
      checkRoutingRows(fin.json.samples[0].routed_experts, fin.json.samples[0].input_ids, "finish");
    });
    journal.close();

    const again = new SqliteJournal(dir);
    try {
      await withGateway({ journal: again }, async (gw) => {
        await gw.gw.restore();
        const after = (await gw.api("GET", `/rollouts/${id}/samples?form=tree`)).json;
        assert.deepEqual(after, before, "the tree form, rows included, as before the restart");
        // The sample log keeps a reference to the rows, read back when streamed; deleting the
        // rollout keeps the rows its logged samples refer to.
        const expected = (streamed as { routed_experts: unknown }[])[0].routed_experts;
        assert.deepEqual((await firstLogged(gw.url)).routed_experts, expected);
        assert.equal((await gw.api("DELETE", `/rollouts/${id}`)).status, 200);
        assert.deepEqual((await firstLogged(gw.url)).routed_experts, expected);
      });
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("without a journal, a deleted rollout's logged samples stream with routed_experts null", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout();
    const agent = agentCall(gw, r, "chat/completions", { model: "m", tools, messages: [USER] });
    const p = await take(gw, r.id);
    const out = await encode(gw, CALL);
    await gw.api("POST", `/requests/${p.request_id}/complete`, {
      output_ids: out,
      finish_reason: "stop",
      routed_experts: encodeTokenRows(expertRows(SHAPE, p.prompt_ids, out, 0)),
    });
    await agent;
    await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    checkRoutingRows((await firstLogged(gw.url)).routed_experts, [...p.prompt_ids, ...out], "log");
    assert.equal((await gw.api("DELETE", `/rollouts/${r.id}`)).status, 200);
    const logged = await firstLogged(gw.url);
    assert.equal(logged.routed_experts, null, "the rows went with the rollout; the sample did not");
    assert.deepEqual(logged.input_ids, [...p.prompt_ids, ...out]);
  });
});
