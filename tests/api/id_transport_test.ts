/**
 * The compact id transport of the trainer API (`?ids=base64` or the `Accept` media type): the
 * same pending request and the same samples as JSON, decoded from base64 of little-endian bytes;
 * JSON stays the default; an unknown encoding is a 400. Real gateway on a loopback socket, real
 * Qwen3 tokenizer; the trainer is this test (answering with fixed ids).
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { BASE64_IDS_MEDIA_TYPE, idsFromBase64 } from "../../gateway/mod.ts";
import { agentCall, call, startGateway, type TestGateway } from "./loopback_gateway.ts";

const OUTPUT = [9707, 151645]; // "Hello" <|im_end|>
const LOGPROBS = [-0.25, -0.0078125];

function bytes(text: string): Buffer {
  return Buffer.from(text, "base64");
}

/** A sample from its base64 form back to the JSON form. */
// deno-lint-ignore no-explicit-any
function decodedSample(s: any) {
  const { ids_encoding, ...rest } = s;
  assert.equal(ids_encoding, "base64");
  const lp = bytes(s.logprobs);
  return {
    ...rest,
    input_ids: Array.from(idsFromBase64(s.input_ids)),
    loss_mask: Array.from(bytes(s.loss_mask)),
    sft_mask: Array.from(bytes(s.sft_mask)),
    logprobs: Array.from({ length: lp.length / 8 }, (_, i) => lp.readDoubleLE(i * 8)),
  };
}

async function pendingOf(gw: TestGateway, rollout: string, query: string, accept?: string) {
  const res = await call(`${gw.url}/api/requests/next?wait=5&rollout=${rollout}${query}`, {
    headers: accept ? { accept } : {},
  });
  assert.equal(res.status, 200, JSON.stringify(res.json));
  return res.json;
}

Deno.test("trainer API: base64 ids carry the same prompt and samples as JSON", async () => {
  const gw = await startGateway();
  try {
    const messages = [{ role: "user", content: "Say hello" }];
    const rollouts = [await gw.rollout(), await gw.rollout(), await gw.rollout()];
    const agents = rollouts.map((r) =>
      agentCall(gw, r, "chat/completions", { model: "m", messages })
    );
    const json = await pendingOf(gw, rollouts[0].id, "");
    const query = await pendingOf(gw, rollouts[1].id, "&ids=base64");
    const accepted = await pendingOf(gw, rollouts[2].id, "", BASE64_IDS_MEDIA_TYPE);

    assert.ok(Array.isArray(json.prompt_ids) && json.prompt_ids.length > 5);
    assert.equal(json.ids_encoding, undefined, "JSON is the default");
    for (const compact of [query, accepted]) {
      assert.equal(compact.ids_encoding, "base64");
      assert.equal(typeof compact.prompt_ids, "string");
      assert.equal(bytes(compact.prompt_ids).length, json.prompt_ids.length * 4);
      assert.deepEqual(Array.from(idsFromBase64(compact.prompt_ids)), json.prompt_ids);
      assert.deepEqual(compact.sampling, json.sampling);
    }

    for (const p of [json, query, accepted]) {
      const done = await gw.api("POST", `/requests/${p.request_id}/complete`, {
        output_ids: OUTPUT,
        logprobs: LOGPROBS,
        finish_reason: "stop",
      });
      assert.equal(done.status, 200, JSON.stringify(done.json));
    }
    // `call` bounds each agent's wait (10 s).
    for (const a of agents) assert.equal((await a).status, 200);

    const r = rollouts[1].id;
    const finished = await gw.api("POST", `/rollouts/${r}/finish?ids=base64`, { reward: 1 });
    assert.equal(finished.status, 200);
    const plain = await gw.api("GET", `/rollouts/${r}/samples`);
    assert.equal(plain.json.samples.length, 1);
    const [s] = plain.json.samples;
    assert.deepEqual(s.input_ids, [...json.prompt_ids, ...OUTPUT]);
    assert.deepEqual(s.logprobs.slice(-2), LOGPROBS);
    assert.deepEqual(finished.json.samples.map(decodedSample), plain.json.samples);
    const compact = await gw.api("GET", `/rollouts/${r}/samples?ids=base64`);
    assert.deepEqual(compact.json.samples.map(decodedSample), plain.json.samples);
  } finally {
    await gw.close();
  }
});

Deno.test("trainer API: an unknown id encoding is a 400 that names the choices", async () => {
  const gw = await startGateway();
  try {
    const r = await gw.rollout();
    for (const path of ["/requests/next?ids=xml", `/rollouts/${r.id}/samples?ids=int32`]) {
      const res = await gw.api("GET", path);
      assert.equal(res.status, 400, path);
      assert.match(res.json.error.message, /ids must be json or base64/);
    }
    const finish = await gw.api("POST", `/rollouts/${r.id}/finish?ids=hex`, { reward: 1 });
    assert.equal(finish.status, 400);
    assert.equal((await gw.api("GET", `/rollouts/${r.id}`)).json.status, "active", "not finished");
  } finally {
    await gw.close();
  }
});
