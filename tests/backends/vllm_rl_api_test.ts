/**
 * vLLM's RL API through the real gateway and the real `VllmBackend`, the engine a TEST DOUBLE
 * that speaks vLLM 0.32's exact wire (`FakeVllm`): `/inference/v1/generate` when the server has
 * it (probed once), `/v1/completions` when not or when told; weight-version spans into the
 * turn's runs; MoE routing as `.npy` on both endpoints, aligned position by position as SGLang's
 * rows are; kept sets into the token-row store. The real CPU vLLM covers the rest
 * (`tests/engine/vllm_backend_test.ts`); MoE routing and kept sets need GPU-only parts.
 */
import assert from "node:assert/strict";
import type OpenAI from "openai";
import { engineLogprob } from "./fake_engines.ts";
import { READ_FILE, type Rig, startRig } from "./engine_gateway.ts";
import { checkRoutingRows, expandTree, keptSetsList } from "../support/sample_facts_check.ts";

const USER = { role: "user" as const, content: "What does the README say?" };
const GENERATE = "/inference/v1/generate";

/** A tool call, its result, the answer: two turns on one chain. */
async function exchange(client: OpenAI, stream = false) {
  const first = await client.chat.completions.create({
    model: "policy",
    messages: [USER],
    tools: [READ_FILE],
  });
  const call = first.choices[0].message.tool_calls![0];
  const messages = [
    USER,
    first.choices[0].message,
    { role: "tool" as const, tool_call_id: call.id, content: "# hello" },
  ];
  if (!stream) {
    await client.chat.completions.create({ model: "policy", messages, tools: [READ_FILE] });
    return;
  }
  const chunks = await client.chat.completions.create({
    model: "policy",
    messages,
    tools: [READ_FILE],
    stream: true,
  });
  for await (const _ of chunks) { /* read to the end */ }
}

async function finished(rig: Rig, id: string) {
  const fin = await rig.api("POST", `/rollouts/${id}/finish`, { reward: 1 });
  assert.equal(fin.status, 200, JSON.stringify(fin.json));
  const [sample] = fin.json.samples;
  return sample;
}

for (const stream of [false, true]) {
  Deno.test(`vLLM RL API${stream ? " (streamed)" : ""}: probed once, every call on /inference/v1/generate, engine ids and logprobs in the sample`, async () => {
    const rig = await startRig({ vllmScaleOut: true, vllmStream: stream });
    try {
      for (let k = 0; k < 2; k++) {
        const r = await rig.rollout({ backend: "vllm", sampling: { temperature: 0.7, top_k: 20 } });
        await exchange(rig.agent(r), stream);
        const sample = await finished(rig, r.id);
        const mine = rig.vllm.generations.items.slice(-2);
        assert.ok(mine.every((g) => g.path === GENERATE));
        const sampled = sample.input_ids.filter((_: number, i: number) => sample.loss_mask[i]);
        assert.deepEqual(sampled, [...mine[0].output!, ...mine[1].output!]);
        const lps = sample.logprobs.filter((_: number, i: number) => sample.loss_mask[i]);
        assert.deepEqual(lps, mine.flatMap((g) => g.output!.map((_, i) => engineLogprob(i))));
        assert.equal(sample.turn_spans[0].weight_version, "w-7", "the engine's span");
      }
      assert.equal(rig.vllm.probes.items.length, 1, "one probe for every generation after");
      const [one] = rig.vllm.generations.items;
      assert.equal(one.body.stream, stream);
      assert.equal(one.body.request_id.startsWith("req_"), true);
      assert.deepEqual(one.body.token_ids.length > 0, true);
      const s = one.body.sampling_params;
      assert.equal(s.temperature, 0.7);
      assert.equal(s.top_k, 20, "top_k reaches the engine");
      assert.equal(s.routed_experts_prompt_start, 0);
      assert.deepEqual(s.stop_token_ids, rig.model.stopTokenIds);
    } finally {
      await rig.close();
    }
  });
}

Deno.test("vLLM RL API: a server without it (404, or 403 when switched off) is served on /v1/completions; api forces either, unprobed", async () => {
  // No such route (404), or vLLM 0.32 started without --enable-scale-out (its 403).
  for (const scaleOut of [false, "disabled"] as const) {
    const plain = await startRig({ vllmScaleOut: scaleOut });
    try {
      const r = await plain.rollout({ backend: "vllm" });
      await exchange(plain.agent(r));
      assert.equal(plain.vllm.probes.items.length, 1, "the probe met a 404 or 403");
      assert.deepEqual(plain.vllm.generations.items.map((g) => g.path), [
        "/v1/completions",
        "/v1/completions",
      ]);
    } finally {
      await plain.close();
    }
  }
  for (const api of ["completions", "generate"] as const) {
    const rig = await startRig({ vllmScaleOut: true, vllmApi: api });
    try {
      await exchange(rig.agent(await rig.rollout({ backend: "vllm" })));
      assert.equal(rig.vllm.probes.items.length, 0, `${api}: no probe`);
      const path = api === "generate" ? GENERATE : "/v1/completions";
      assert.ok(rig.vllm.generations.items.every((g) => g.path === path));
    } finally {
      await rig.close();
    }
  }
});

for (const stream of [false, true]) {
  Deno.test(`vLLM RL API${stream ? " (streamed)" : ""}: a weight update inside a turn keeps both versions; the turn's is its first id's`, async () => {
    const rig = await startRig({ vllmScaleOut: true, vllmStream: stream });
    try {
      rig.vllm.versionChange = { after: 3, version: "w-8" };
      const r = await rig.rollout({ backend: "vllm" });
      await exchange(rig.agent(r), stream);
      const sample = await finished(rig, r.id);
      const [span1, span2] = sample.turn_spans;
      assert.equal(span1.weight_version, "w-7", "sampled first under w-7");
      assert.equal(span1.completion_version, "w-8", "and completed under w-8");
      assert.deepEqual(span1.weight_versions, [
        [span1.output_start, "w-7"],
        [span1.output_start + 3, "w-8"],
      ]);
      assert.equal(span2.weight_version, "w-8");
      assert.equal(span2.weight_versions, undefined);
      assert.deepEqual(sample.version_span, ["w-7", "w-8"]);
    } finally {
      await rig.close();
    }
  });
}

Deno.test("vLLM completions API: the version a resume put in force when the request went out, beside the header's at completion", async () => {
  const rig = await startRig({ vllmScaleOut: false });
  try {
    rig.vllm.weightVersion = "w-3";
    assert.equal((await rig.api("POST", "/resume", { weight_version: "w-2" })).status, 200);
    const r = await rig.rollout({ backend: "vllm" });
    await exchange(rig.agent(r));
    const sample = await finished(rig, r.id);
    for (const span of sample.turn_spans) {
      assert.deepEqual([span.weight_version, span.completion_version], ["w-2", "w-3"]);
    }
    const calls = (await rig.api("GET", `/rollouts/${r.id}/samples?form=calls`)).json.calls;
    assert.deepEqual(calls.map((c: { completion_version: string }) => c.completion_version), [
      "w-3",
      "w-3",
    ]);
  } finally {
    await rig.close();
  }
});

for (const api of ["generate", "completions"] as const) {
  Deno.test(`vLLM routing replay (${api}): .npy rows from routed_experts_prompt_start, aligned in the sample`, async () => {
    const rig = await startRig({
      vllmScaleOut: true,
      vllmApi: api,
      vllmRouting: { layers: 3, topK: 2 },
    });
    try {
      const r = await rig.rollout({ backend: "vllm" });
      await exchange(rig.agent(r));
      const [one, two] = rig.vllm.generations.items;
      const start = (g: typeof one) =>
        (api === "generate" ? g.body.sampling_params : g.body).routed_experts_prompt_start;
      const prompt = (g: typeof one) => api === "generate" ? g.body.token_ids : g.body.prompt;
      assert.equal(start(one), 0);
      assert.equal(
        start(two),
        prompt(one).length + one.output!.length - 1,
        "turn 2 asks from turn 1's last id",
      );
      const sample = await finished(rig, r.id);
      checkRoutingRows(sample.routed_experts, sample.input_ids, `vLLM ${api} sample`);
      const tree = (await rig.api("GET", `/rollouts/${r.id}/samples?form=tree`)).json;
      assert.equal(tree.samples[0].routed_experts.parts.length, 2, "one part per turn");
    } finally {
      await rig.close();
    }
  });
}

Deno.test("vLLM kept sets (sampling_mask) go to the token-row store, one row per sampled id, and to the samples aligned", async () => {
  for (const stream of [false, true]) {
    const rig = await startRig({ vllmScaleOut: true, vllmSamplingMask: true, vllmStream: stream });
    try {
      const r = await rig.rollout({ backend: "vllm", sampling: { top_k: 5 } });
      await exchange(rig.agent(r));
      const rollout = rig.gw.store.get(r.id)!;
      for (const [k, turn] of rollout.turns.entries()) {
        const out = rig.vllm.generations.items[k].output!;
        const meta = turn.facts!.rows!.sampling_mask!;
        assert.deepEqual(meta, {
          from: turn.ids.outputStart,
          dtype: "int32",
          shape: [out.length, 1, 5],
        });
        const bytes = rollout.rows!.readRows(turn.id, "sampling_mask")!;
        const values = Array.from(new Int32Array(bytes.slice().buffer));
        assert.deepEqual(values, out.flatMap((id) => [id, id + 1, id + 2, -1, -1]));
      }
      // Exported aligned with the sample's ids: each sampled id's kept set, nothing elsewhere.
      const sample = await finished(rig, r.id);
      const want: number[][] = sample.input_ids.map(() => []);
      sample.turn_spans.forEach((span: { output_start: number; end: number }) => {
        for (let p = span.output_start; p < span.end; p++) {
          const id = sample.input_ids[p];
          want[p] = [id, id + 1, id + 2];
        }
      });
      assert.deepEqual(keptSetsList(sample.sampling_mask), want);
      const tree = (await rig.api("GET", `/rollouts/${r.id}/samples?form=tree`)).json;
      assert.deepEqual(keptSetsList(expandTree(tree)[0].sampling_mask!), want);
    } finally {
      await rig.close();
    }
  }
});
