/**
 * A two-turn tool call → answer exchange through vLLM and SGLang (fakes at the engine boundary,
 * everything else real): the engines receive the exact prompt ids, sampling fields and routing
 * key, and the rollout's sample holds the engine's ids and logprobs.
 */
import assert from "node:assert/strict";
import type OpenAI from "openai";
import { engineLogprob, type Received } from "./fake_engines.ts";
import { ENGINE_MODEL, READ_FILE, type Rig, startRig } from "./engine_gateway.ts";
import { checkRoutingRows } from "../support/sample_facts_check.ts";

const USER = { role: "user" as const, content: "What does the README say?" };

/** Runs the exchange with the SDK; returns the two answers. */
async function toolExchange(client: OpenAI) {
  const first = await client.chat.completions.create({
    model: "policy",
    messages: [USER],
    tools: [READ_FILE],
  });
  const call = first.choices[0].message.tool_calls?.[0];
  assert.ok(call && call.type === "function", JSON.stringify(first.choices[0]));
  assert.equal(call.function.name, "read_file");
  assert.deepEqual(JSON.parse(call.function.arguments), { path: "README.md" });
  assert.equal(first.choices[0].finish_reason, "tool_calls");

  const stream = await client.chat.completions.create({
    model: "policy",
    messages: [
      USER,
      first.choices[0].message,
      { role: "tool", tool_call_id: call.id, content: "# hello" },
    ],
    tools: [READ_FILE],
    stream: true,
  });
  let text = "";
  let finish: string | null = null;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta?.content ?? "";
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { first, text, finish };
}

async function checkExchange(
  rig: Rig,
  backend: "vllm" | "sglang",
  promptOf: (r: Received) => number[],
) {
  const engine = backend === "vllm" ? rig.vllm : rig.sglang;
  const other = backend === "vllm" ? rig.sglang : rig.vllm;
  const r = await rig.rollout({ backend, sampling: { temperature: 0.7, top_p: 0.9 } });
  const { text, finish } = await toolExchange(rig.agent(r));
  assert.equal(text, "The README says hello.");
  assert.equal(finish, "stop");

  const [one, two] = engine.generations.items;
  assert.equal(engine.generations.items.length, 2);
  assert.equal(other.generations.items.length, 0, "only the chosen engine generates");
  for (const g of [one, two]) {
    assert.equal(g.headers.get("x-session-id"), r.id, "sticky routing key = rollout id");
  }
  // Token-faithful: turn 2's prompt is turn 1's exact prompt + sampled ids + the rendered delta.
  const out1 = one.output!;
  const p1 = promptOf(one);
  const p2 = promptOf(two);
  assert.deepEqual(p2.slice(0, p1.length + out1.length), [...p1, ...out1]);
  const full = await rig.model.renderFull([USER], [{ kind: "function", ...READ_FILE.function }]);
  assert.deepEqual(p1, full.ids, "turn 1's prompt is the full render");

  const info = await rig.api("GET", `/rollouts/${r.id}`);
  assert.deepEqual(info.json.turn_list.map((t: { status: string }) => t.status), ["done", "done"]);
  assert.deepEqual(info.json.turn_list.map((t: { weight_version: unknown }) => t.weight_version), [
    "w-7",
    "w-7",
  ]);

  const fin = await rig.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
  assert.equal(fin.status, 200, JSON.stringify(fin.json));
  const sample = fin.json.samples.find((s: { turns: string[] }) => s.turns.length === 2);
  assert.ok(sample, JSON.stringify(fin.json.samples.map((s: { turns: string[] }) => s.turns)));
  const out2 = two.output!;
  const sampledIds = sample.input_ids.filter((_: number, i: number) => sample.loss_mask[i] === 1);
  const sampledLps = sample.logprobs.filter((_: number, i: number) => sample.loss_mask[i] === 1);
  assert.deepEqual(sampledIds, [...out1, ...out2]);
  assert.deepEqual(sampledLps, [
    ...out1.map((_, i) => engineLogprob(i)),
    ...out2.map((_, i) => engineLogprob(i)),
  ]);
  return { one, two };
}

Deno.test("vLLM: tool call → answer, exact prompt ids, sampling fields, engine logprobs", async () => {
  const rig = await startRig();
  try {
    const { one } = await checkExchange(rig, "vllm", (g) => g.body.prompt);
    const b = one.body;
    assert.equal(b.model, ENGINE_MODEL);
    assert.equal(b.temperature, 0.7);
    assert.equal(b.top_p, 0.9);
    assert.equal(b.logprobs, 0);
    assert.equal(b.return_token_ids, true);
    assert.equal(b.skip_special_tokens, false);
    assert.equal(b.include_stop_str_in_output, true);
    assert.deepEqual(b.stop_token_ids, rig.model.stopTokenIds);
    assert.equal(b.max_tokens, rig.model.contextLength - b.prompt.length);
  } finally {
    await rig.close();
  }
});

Deno.test("SGLang: tool call → answer, input_ids, sampling_params, rid, engine logprobs", async () => {
  const rig = await startRig();
  try {
    const { one, two } = await checkExchange(rig, "sglang", (g) => g.body.input_ids);
    const s = one.body.sampling_params;
    assert.equal(s.temperature, 0.7);
    assert.equal(s.top_p, 0.9);
    assert.equal(s.skip_special_tokens, false);
    assert.equal(s.no_stop_trim, true);
    assert.deepEqual(s.stop_token_ids, rig.model.stopTokenIds);
    assert.equal(s.max_new_tokens, rig.model.contextLength - one.body.input_ids.length);
    assert.equal(one.body.return_logprob, true);
    assert.match(one.body.rid, /^req_[0-9a-f]+$/);
    assert.notEqual(one.body.rid, two.body.rid);
  } finally {
    await rig.close();
  }
});

Deno.test("the default backend serves rollouts that name none; unknown names are refused", async () => {
  const rig = await startRig({ defaultBackend: "sglang" });
  try {
    const r = await rig.rollout();
    await toolExchange(rig.agent(r));
    assert.equal(rig.sglang.generations.items.length, 2);
    assert.equal(rig.vllm.generations.items.length, 0);

    const bad = await rig.api("POST", "/rollouts", { backend: "tgi" });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.type, "invalid_request");
    assert.match(bad.json.error.message, /unknown backend tgi.*gate/);
    for (const name of ["gate", "vllm", "sglang"]) {
      assert.equal((await rig.api("POST", "/rollouts", { backend: name })).status, 201);
    }
  } finally {
    await rig.close();
  }
});

Deno.test("SGLang routing replay: each call asks for rows from where the chain's rows end; the sample has them aligned", async () => {
  const rig = await startRig({ sglangRouting: { layers: 3, topK: 2, experts: 64 } });
  try {
    const r = await rig.rollout({ backend: "sglang", group: "g" });
    await toolExchange(rig.agent(r));
    const [one, two] = rig.sglang.generations.items;
    assert.equal(one.body.return_routed_experts, true);
    assert.equal(one.body.routed_experts_start_len, 0);
    const end1 = one.body.input_ids.length + one.output!.length - 1;
    assert.equal(two.body.routed_experts_start_len, end1, "turn 2 asks from turn 1's last id");
    const fin = await rig.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    const sample = fin.json.samples.find((s: { turns: string[] }) => s.turns.length === 2);
    assert.equal(sample.routed_experts.dtype, "uint8", "64 experts fit a byte");
    checkRoutingRows(sample.routed_experts, sample.input_ids, "SGLang sample");
    assert.equal(sample.turn_spans[0].sampling.logprobs_mode, "raw");
  } finally {
    await rig.close();
  }
});
