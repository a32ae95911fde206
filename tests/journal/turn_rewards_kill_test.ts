/**
 * Rewards per turn survive `kill -9`: a real `main.ts serve` with its SQLite journal, over real
 * sockets. A turn's reward posted before finish and one posted after finish are each answered,
 * then the process is killed (SIGKILL) at once; started again on the same data directory, the
 * samples carry both, a repeat of either changes nothing and another value is refused.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";

const HELLO = [9707, 151645]; // "Hello<|im_end|>"

// deno-lint-ignore no-explicit-any
async function call(url: string, method = "GET", body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

/** One chat turn of rollout `id`, answered by a trainer's completion. */
async function turn(gw: GatewayProcess, r: { id: string; token: string }, messages: unknown[]) {
  const agent = fetch(`${gw.url}/rollout/${r.id}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${r.token}` },
    body: JSON.stringify({ model: "m", messages }),
    signal: AbortSignal.timeout(30_000),
  });
  const next = await call(`${gw.url}/api/requests/next?wait=10&rollout=${r.id}`);
  assert.equal(next.status, 200, JSON.stringify(next.json));
  const done = await call(`${gw.url}/api/requests/${next.json.request_id}/complete`, "POST", {
    output_ids: HELLO,
    logprobs: [-0.5, -0.25],
    finish_reason: "stop",
  });
  assert.equal(done.status, 200, JSON.stringify(done.json));
  const answer = await (await agent).json();
  return answer.choices[0].message.content as string;
}

/** Kills the gateway with SIGKILL and starts it again on its data directory. */
async function crash(gw: GatewayProcess) {
  const status = await gw.kill("SIGKILL");
  assert.equal(status.signal, "SIGKILL");
  await gw.restart();
}

Deno.test("kill -9: turn rewards posted before and after finish come back, still idempotent", async () => {
  const gw = await startGateway();
  try {
    const r = (await call(`${gw.url}/api/rollouts`, "POST", { id: "steps" })).json;
    const messages: { role: string; content: string }[] = [{ role: "user", content: "one" }];
    messages.push({ role: "assistant", content: await turn(gw, r, messages) });
    messages.push({ role: "user", content: "two" });
    await turn(gw, r, messages);

    const before = await call(`${gw.url}/api/rollouts/steps/turns/0/reward`, "POST", {
      reward: 0.5,
    });
    assert.equal(before.status, 200, JSON.stringify(before.json));
    await crash(gw);
    const fin = await call(`${gw.url}/api/rollouts/steps/finish`, "POST", { reward: 1 });
    assert.equal(fin.status, 200, JSON.stringify(fin.json));
    assert.deepEqual(fin.json.samples[0].turn_rewards, [0.5, null]);
    const after = await call(`${gw.url}/api/rollouts/steps/turns/1/reward`, "POST", { reward: -1 });
    assert.equal(after.status, 200, JSON.stringify(after.json));
    await crash(gw);

    const [sample] = (await call(`${gw.url}/api/rollouts/steps/samples`)).json.samples;
    assert.deepEqual(sample.turn_rewards, [0.5, -1]);
    const [span0, span1] = sample.turn_spans;
    assert.equal(sample.position_rewards[span0.end - 1], 0.5);
    assert.equal(sample.position_rewards[span1.end - 1], -1);
    assert.equal(sample.reward, 1);
    const repeat = await call(`${gw.url}/api/rollouts/steps/turns/${span1.turn}/reward`, "POST", {
      reward: -1,
    });
    assert.deepEqual([repeat.status, repeat.json.recorded], [200, false]);
    const other = await call(`${gw.url}/api/rollouts/steps/turns/0/reward`, "POST", { reward: 2 });
    assert.equal(other.status, 409, JSON.stringify(other.json));
  } catch (e) {
    console.error(gw.output().slice(-3000));
    throw e;
  } finally {
    await gw.stop();
  }
});
