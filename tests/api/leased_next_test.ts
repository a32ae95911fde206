/**
 * `GET /api/requests/next?ack=1` over real HTTP through the gate: each request is handed out
 * leased, as an `ack` would lease it (its `lease_s` and `expires_at` in the answer, the poll's
 * lease or the default, the weight version named or in force), so a trainer's turn is `next` +
 * `complete`. A lost answer costs the lease: the request is offered again once it lapses, and its
 * sampled ids carry loss in exactly one sample. A withdrawn request answers `renew` with 410; the
 * batch form leases every request it hands out; the two-step form is unchanged.
 *
 * @module
 */
import assert from "node:assert/strict";
import { agentCall, type TestGateway, withGateway } from "./loopback_gateway.ts";
import { until } from "../support/until.ts";

const HELLO = [9707, 151645]; // "Hello<|im_end|>"
const ask = (content: string) => ({ model: "m", messages: [{ role: "user", content }] });
const done = { output_ids: HELLO, logprobs: [-0.5, -0.25], finish_reason: "stop" };

/** The next request of `rollout`, taken leased with `query` added, asserted 200. */
async function takeLeased(gw: TestGateway, rollout: string, query = "") {
  const next = await gw.api("GET", `/requests/next?wait=5&rollout=${rollout}&ack=1${query}`);
  assert.equal(next.status, 200, JSON.stringify(next.json));
  return next.json;
}

Deno.test("next?ack=1: handed out leased, no ack; completed once; the version named or in force", async () => {
  await withGateway({ delivery: { ackTimeoutMs: 200 } }, async (gw) => {
    const r = await gw.rollout();
    const agent = agentCall(gw, r, "chat/completions", ask("hi"));
    const before = Date.now();
    const req = await takeLeased(gw, r.id, "&lease=30&weight_version=3");
    assert.equal(req.lease_s, 30, "the poll's lease");
    assert.ok(req.expires_at >= before + 30_000 && req.expires_at <= Date.now() + 30_000);
    assert.equal(req.prompt_ids.length > 0, true, "the request as the two-step form hands it");
    const status = (await gw.api("GET", "/status")).json.requests;
    assert.deepEqual([status.delivered, status.leased], [0, 1]);
    // Past the ack timeout it stays this trainer's: nobody else gets it.
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await gw.api("GET", "/requests/next?wait=0")).status, 204);
    const renew = await gw.api("POST", `/requests/${req.request_id}/renew`);
    assert.equal(renew.status, 200);
    assert.equal(renew.json.lease_s, 30, "a renewal keeps the lease the poll was granted");
    const completed = await gw.api("POST", `/requests/${req.request_id}/complete`, done);
    assert.equal(completed.status, 200, JSON.stringify(completed.json));
    assert.equal((await agent).status, 200);
    const other = await gw.api("POST", `/requests/${req.request_id}/complete`, {
      ...done,
      output_ids: [13048, 151645],
    });
    assert.equal(other.status, 409, "completed once");

    // No lease named: the gateway's default; no version named: the one in force.
    assert.equal((await gw.api("POST", "/resume", { weight_version: 7 })).status, 200);
    const second = agentCall(gw, r, "chat/completions", ask("again"));
    const req2 = await takeLeased(gw, r.id);
    assert.equal(req2.lease_s, 60);
    await gw.api("POST", `/requests/${req2.request_id}/complete`, done);
    assert.equal((await second).status, 200);
    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    assert.equal(fin.status, 200, JSON.stringify(fin.json));
    const spans = fin.json.samples.flatMap((s: { turn_spans: unknown[] }) => s.turn_spans);
    assert.deepEqual(spans.map((s: { weight_version: number }) => s.weight_version), [3, 7]);

    // Bad forms: a clear 400, nothing taken.
    const third = agentCall(gw, await gw.rollout(), "chat/completions", ask("x"));
    for (
      const [query, message] of [
        ["ack=2", /ack must be 0 or 1/],
        ["weight_version=3", /needs ack=1/],
        ["ack=1&weight_version=", /must not be empty/],
        ["ack=1&lease=0", /lease must be more than 0/],
      ] as const
    ) {
      const bad = await gw.api("GET", `/requests/next?wait=0&${query}`);
      assert.equal(bad.status, 400, query);
      assert.match(bad.json.error.message, message);
    }
    assert.equal((await gw.api("GET", "/status")).json.requests.queued, 1, "still queued");
    const plain = await gw.api("GET", "/requests/next?wait=5&ack=0");
    assert.equal(plain.json.lease_s, undefined, "ack=0: the two-step form");
    assert.equal((await gw.api("GET", "/status")).json.requests.delivered, 1);
    await gw.api("POST", `/requests/${plain.json.request_id}/ack`);
    await gw.api("POST", `/requests/${plain.json.request_id}/complete`, done);
    assert.equal((await third).status, 200);
  });
});

Deno.test("next?ack=1: a lost answer is offered again once the lease lapses; its ids train once", async () => {
  await withGateway({ delivery: { ackTimeoutMs: 200 } }, async (gw) => {
    const r = await gw.rollout();
    const agent = agentCall(gw, r, "chat/completions", ask("hi"));
    const lost = await takeLeased(gw, r.id, "&lease=1.5"); // its answer never reaches the trainer
    assert.equal(lost.lease_s, 1.5);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(
      (await gw.api("GET", "/requests/next?wait=0")).status,
      204,
      "past the ack timeout: still under its lease",
    );
    const again = await takeLeased(gw, r.id);
    assert.equal(again.request_id, lost.request_id, "offered again after the lease");
    assert.ok(Date.now() >= lost.expires_at - 50, "not before the lease ran out");
    const completed = await gw.api("POST", `/requests/${again.request_id}/complete`, done);
    assert.equal(completed.status, 200);
    assert.equal((await agent).status, 200);
    assert.equal((await gw.api("GET", "/status")).json.requests.redelivered, 1);
    const fin = await gw.api("POST", `/rollouts/${r.id}/finish`, { reward: 1 });
    const mask = fin.json.samples.flatMap((s: { loss_mask: number[] }) => s.loss_mask);
    assert.equal(mask.reduce((a: number, b: number) => a + b, 0), HELLO.length, "trained once");
  });
});

Deno.test("next?ack=1&max=: every request of the batch is leased; a withdrawn one refuses renew with 410", async () => {
  await withGateway({ timeouts: { abandonGraceMs: 100 } }, async (gw) => {
    const r = await gw.rollout();
    const agents = [1, 2, 3].map((i) => agentCall(gw, r, "chat/completions", ask(`hi ${i}`)));
    await until(async () => await gw.gw.rollouts.pendingRequests() === 3, "three queued");
    const batch = await gw.api("GET", `/requests/next?wait=5&max=8&ack=1&lease=20`);
    assert.equal(batch.status, 200);
    assert.equal(batch.json.requests.length, 3);
    for (const req of batch.json.requests) assert.equal(req.lease_s, 20, req.request_id);
    assert.equal((await gw.api("GET", "/status")).json.requests.leased, 3);
    for (const req of batch.json.requests) {
      const c = await gw.api("POST", `/requests/${req.request_id}/complete`, done);
      assert.equal(c.status, 200);
    }
    for (const a of agents) assert.equal((await a).status, 200);

    // The agent leaves for good: the leased request is withdrawn and its renewal says so.
    const gone = new AbortController();
    const leaving = await fetch(`${gw.url}/rollout/${r.id}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
      body: JSON.stringify({ ...ask("bye"), stream: true }),
      signal: gone.signal,
    });
    const req = await takeLeased(gw, r.id);
    gone.abort();
    await leaving.body?.cancel().catch(() => {});
    await until(async () => await gw.gw.rollouts.pendingRequests() === 0, "withdrawn");
    const renew = await gw.api("POST", `/requests/${req.request_id}/renew`);
    assert.equal(renew.status, 410);
    assert.match(renew.json.error.message, /withdrawn/);
  });
});
