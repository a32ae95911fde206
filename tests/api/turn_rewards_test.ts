/**
 * Rewards per turn over real HTTP: `POST /api/rollouts/:id/turns/:turn/reward` before and after
 * finish, by turn id and by index; a repeat of the same reward changes nothing, another reward,
 * an unknown turn and a turn still waiting are refused and change nothing. The samples carry
 * them aligned with the turn spans (`turn_rewards`) and per position (`position_rewards`: the
 * reward at each turn's last sampled id), in both id transports and in the tree and calls forms
 * (which expand to the flat sample), in the rollout's summary and turn list, and the same after
 * a restart from the journal. A rollout without per-turn rewards carries none of these fields.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { SqliteJournal } from "../../journal/mod.ts";
import { expandCalls, expandTree, flatArrays } from "../support/sample_facts_check.ts";
import {
  agentCall,
  READ_FILE_TOOL,
  type RolloutHandle,
  take,
  type TestGateway,
  TOOL_RESULT,
  withGateway,
} from "./loopback_gateway.ts";

const tools = [{ type: "function", function: READ_FILE_TOOL }];
const USER = { role: "user", content: "Read the README." };
const CALL =
  '<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call><|im_end|>';

async function complete(gw: TestGateway, rollout: string, text: string) {
  const p = await take(gw, rollout);
  const ids = await gw.gw.model.tokenizer.encode(text);
  const done = await gw.api("POST", `/requests/${p.request_id}/complete`, {
    output_ids: ids,
    logprobs: ids.map(() => -0.5),
    finish_reason: "stop",
  });
  assert.equal(done.status, 200, JSON.stringify(done.json));
}

/** A tool call, then an answer: two turns on one chain. */
async function twoTurns(gw: TestGateway, r: RolloutHandle) {
  const first = agentCall(gw, r, "chat/completions", { model: "m", tools, messages: [USER] });
  await complete(gw, r.id, CALL);
  const message = (await first).json.choices[0].message;
  const second = agentCall(gw, r, "chat/completions", {
    model: "m",
    tools,
    messages: [USER, message, {
      role: "tool",
      tool_call_id: message.tool_calls[0].id,
      content: TOOL_RESULT,
    }],
  });
  await complete(gw, r.id, "Hello.<|im_end|>");
  assert.equal((await second).status, 200);
}

const reward = (gw: TestGateway, id: string, turn: string | number, value: unknown) =>
  gw.api("POST", `/rollouts/${id}/turns/${turn}/reward`, { reward: value });

function float64s(text: string): number[] {
  const bytes = Buffer.from(text, "base64");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from({ length: bytes.byteLength / 8 }, (_, i) => view.getFloat64(i * 8, true));
}

/** Every form of rollout `id`'s one sample, with `rewards` (one per turn, null: none). */
async function checkForms(gw: TestGateway, id: string, rewards: (number | null)[]) {
  const [s] = (await gw.api("GET", `/rollouts/${id}/samples`)).json.samples;
  assert.deepEqual(s.turn_rewards, rewards);
  assert.deepEqual(s.turn_spans.map((x: { reward?: number }) => x.reward ?? null), rewards);
  const expected = new Array(s.input_ids.length).fill(0);
  s.turn_spans.forEach((span: { end: number }, k: number) => expected[span.end - 1] = rewards[k]);
  assert.deepEqual(s.position_rewards, expected, "each turn's reward at its last sampled id");
  assert.equal(s.loss_mask[s.turn_spans[0].end - 1], 1, "a sampled, trained position");

  const b64 = (await gw.api("GET", `/rollouts/${id}/samples?ids=base64`)).json.samples[0];
  const decoded = float64s(b64.position_rewards);
  assert.deepEqual(decoded.map((x) => Number.isNaN(x) ? null : x), expected);

  const arrays = { ...flatArrays(gw.gw.store.get(id)!.samples()[0]) };
  assert.deepEqual(arrays.position_rewards, expected);
  for (const form of ["tree", "calls"]) {
    const json = (await gw.api("GET", `/rollouts/${id}/samples?form=${form}`)).json;
    const expand = form === "tree" ? expandTree : expandCalls;
    assert.deepEqual(expand(json), [arrays], `the ${form} form expands to the flat sample`);
    assert.deepEqual(json.samples[0].turn_rewards, rewards);
  }
  const summary = (await gw.api("GET", `/rollouts/${id}`)).json;
  const posted = Object.fromEntries(
    s.turns.flatMap((t: string, k: number) => rewards[k] === null ? [] : [[t, rewards[k]]]),
  );
  assert.deepEqual(summary.turn_rewards, posted);
  assert.deepEqual(
    summary.turn_list.map((t: { reward?: number }) => t.reward ?? null),
    rewards,
  );
  return s;
}

Deno.test("turn rewards: before and after finish, idempotent by turn, in every sample form", async () => {
  await withGateway({}, async (gw) => {
    const plain = await gw.rollout();
    await twoTurns(gw, plain);
    const [bare] = (await gw.api("GET", `/rollouts/${plain.id}/samples`)).json.samples;
    for (const field of ["turn_rewards", "position_rewards"]) {
      assert.equal(field in bare, false, `no ${field} without per-turn rewards`);
    }
    assert.ok(bare.turn_spans.every((s: object) => !("reward" in s)));

    const r = await gw.rollout();
    // A turn still waiting for its answer takes no reward.
    const first = agentCall(gw, r, "chat/completions", { model: "m", tools, messages: [USER] });
    while (gw.gw.store.get(r.id)?.turns[0]?.status !== "pending") {
      await new Promise((ok) => setTimeout(ok, 10));
    }
    const waiting = await reward(gw, r.id, 0, 1);
    assert.equal(waiting.status, 409, JSON.stringify(waiting.json));
    assert.match(waiting.json.error.message, /still waiting/);
    await complete(gw, r.id, CALL);
    await first;
    const turn0 = gw.gw.store.get(r.id)!.turns[0].id;

    const posted = await reward(gw, r.id, turn0, 0.25);
    assert.equal(posted.status, 200, JSON.stringify(posted.json));
    assert.deepEqual(posted.json, {
      id: r.id,
      turn: turn0,
      index: 0,
      reward: 0.25,
      recorded: true,
    });
    const again = await reward(gw, r.id, 0, 0.25);
    assert.equal(again.status, 200);
    assert.equal(again.json.recorded, false, "the same reward again changes nothing");
    const other = await reward(gw, r.id, turn0, 0.5);
    assert.equal(other.status, 409);
    assert.match(other.json.error.message, /already has reward 0.25/);
    for (const [turn, value, status] of [[7, 1, 404], ["x.0.zz", 1, 404], [0, "high", 400]]) {
      const bad = await reward(gw, r.id, turn as string, value);
      assert.equal(bad.status, status, JSON.stringify(bad.json));
    }
    assert.equal((await reward(gw, "nope", 0, 1)).status, 404);

    // The answer turn, still without a reward: its last sampled id says so (null).
    const message = (await first).json.choices[0].message;
    const second = agentCall(gw, r, "chat/completions", {
      model: "m",
      tools,
      messages: [USER, message, {
        role: "tool",
        tool_call_id: message.tool_calls[0].id,
        content: TOOL_RESULT,
      }],
    });
    await complete(gw, r.id, "Hello.<|im_end|>");
    await second;
    await checkForms(gw, r.id, [0.25, null]);

    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    assert.deepEqual(fin.json.samples[0].turn_rewards, [0.25, null]);
    assert.equal(fin.json.samples[0].reward, 1, "the rollout's reward stays");
    assert.equal((await reward(gw, r.id, 1, -1)).status, 200, "after finish");
    await checkForms(gw, r.id, [0.25, -1]);
  });
});

Deno.test("turn rewards are journaled and restored", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-turn-rewards-" });
  try {
    const journal = new SqliteJournal(dir);
    let id = "", before: unknown;
    await withGateway({ journal }, async (gw) => {
      const r = await gw.rollout();
      id = r.id;
      await twoTurns(gw, r);
      assert.equal((await reward(gw, id, 0, 2)).status, 200);
      await gw.api("POST", `/rollouts/${id}/finish`, { reward: 1 });
      assert.equal((await reward(gw, id, 1, 3)).status, 200);
      before = await checkForms(gw, id, [2, 3]);
    });
    journal.close();
    const again = new SqliteJournal(dir);
    try {
      await withGateway({ journal: again }, async (gw) => {
        await gw.gw.restore();
        const after = await checkForms(gw, id, [2, 3]);
        assert.deepEqual(after, before);
        assert.equal((await reward(gw, id, 1, 3)).json.recorded, false);
        assert.equal((await reward(gw, id, 1, 4)).status, 409);
      });
    } finally {
      again.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
