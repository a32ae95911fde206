/**
 * The weight version a turn is stamped with is the one in force when its first id was sampled,
 * beside the version at completion, over real HTTP through the gate: the first appended chunk's
 * version, else the one the trainer's `ack` names, else the one `POST /api/resume` put in force
 * when the trainer acknowledged it, else the completion's. Staleness uses the first: a turn that
 * waited across a weight update is as old as when it started.
 */
import assert from "node:assert/strict";
import { agentCall, take, type TestGateway, withGateway } from "./loopback_gateway.ts";

const HELLO = [9707, 151645]; // "Hello<|im_end|>"

interface Script {
  ack?: Record<string, unknown>;
  append?: { weight_version: number };
  complete: { weight_version?: number };
}

/** One turn of a new rollout answered by `script`; returns its sample after finish. */
async function turn(gw: TestGateway, script: Script, finish: Record<string, unknown> = {}) {
  const r = await gw.rollout({ max_staleness: 0 });
  const agent = agentCall(gw, r, "chat/completions", {
    model: "m",
    messages: [{ role: "user", content: "hi" }],
  });
  const p = await take(gw, r.id);
  const acked = await gw.api("POST", `/requests/${p.request_id}/ack`, script.ack ?? {});
  assert.equal(acked.status, 200, JSON.stringify(acked.json));
  if (script.append) {
    const appended = await gw.api("POST", `/requests/${p.request_id}/append`, {
      output_ids: HELLO.slice(0, 1),
      ...script.append,
    });
    assert.equal(appended.status, 200);
  }
  const done = await gw.api("POST", `/requests/${p.request_id}/complete`, {
    output_ids: HELLO,
    logprobs: [-0.5, -0.25],
    finish_reason: "stop",
    ...script.complete,
  });
  assert.equal(done.status, 200, JSON.stringify(done.json));
  assert.equal((await agent).status, 200);
  const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1, ...finish });
  assert.equal(fin.status, 200, JSON.stringify(fin.json));
  const [sample] = fin.json.samples;
  const info = (await gw.api("GET", `/rollouts/${r.id}`)).json.turn_list[0];
  assert.equal(info.weight_version, sample.turn_spans[0].weight_version, "turn_list agrees");
  return sample;
}

Deno.test("version at dispatch: the first id's version beside the completion's; staleness uses the first", async () => {
  await withGateway({}, async (gw) => {
    // Only the completion names one: both are it (as before), not stale at its own version.
    const plain = await turn(gw, { complete: { weight_version: 2 } });
    assert.equal(plain.turn_spans[0].weight_version, 2);
    assert.equal(plain.turn_spans[0].completion_version, 2);
    assert.equal(plain.turn_spans[0].stale, undefined);

    // Acked under 3, completed after an update to 4: a turn of version 3, stale at 4.
    const acked = await turn(gw, { ack: { weight_version: 3 }, complete: { weight_version: 4 } });
    const [span] = acked.turn_spans;
    assert.deepEqual([span.weight_version, span.completion_version], [3, 4]);
    assert.equal(span.stale, true, "staleness by the first id's version");
    assert.deepEqual(acked.metadata.stale_turns, [span.turn]);
    assert.deepEqual(acked.version_span, [3, 4]);
    assert.equal(acked.loss_mask.reduce((a: number, b: number) => a + b, 0), 0);

    // The first appended chunk's version is the first id's: it beats the ack's.
    const streamed = await turn(gw, {
      ack: { weight_version: 3 },
      append: { weight_version: 5 },
      complete: { weight_version: 5 },
    }, { weight_version: 5 });
    assert.equal(streamed.turn_spans[0].weight_version, 5);
    assert.equal(streamed.turn_spans[0].stale, undefined);

    // A resume names the version in force; a request acknowledged without one is stamped with it.
    const resumed = await gw.api("POST", "/resume", { weight_version: 7 });
    assert.equal(resumed.status, 200);
    assert.equal(resumed.json.weight_version, 7);
    assert.equal((await gw.api("GET", "/status")).json.weight_version, 7);
    const inForce = await turn(gw, { complete: { weight_version: 8 } });
    assert.deepEqual(
      [inForce.turn_spans[0].weight_version, inForce.turn_spans[0].completion_version],
      [7, 8],
    );
    assert.equal(inForce.turn_spans[0].stale, true);
    const named = await turn(gw, { ack: { weight_version: 8 }, complete: { weight_version: 8 } });
    assert.equal(named.turn_spans[0].weight_version, 8, "the ack's own version beats the resume's");

    const bad = await gw.api("POST", "/resume", { weight_version: [1] });
    assert.equal(bad.status, 400);
  });
});
