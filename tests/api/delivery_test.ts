/**
 * Every wait ends and no request is stranded, over real HTTP: acknowledgement and leases on the
 * trainer API, the turn timeout (the trainer never answers), agents that go away (withdrawn after
 * the abandon grace, re-attached by a retry within it), and late trainer calls (410).
 *
 * @module
 */
import assert from "node:assert/strict";
import { agentCall, parseSse, take, withGateway } from "./loopback_gateway.ts";
import { until } from "../support/until.ts";

const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "m",
  messages: [{ role: "user", content }],
  ...extra,
});

const HELLO = [9707, 151645];

Deno.test("ack and renew over HTTP: a lease is granted, bounded and validated", async () => {
  await withGateway({ delivery: { ackTimeoutMs: 300 } }, async (gw) => {
    const r = await gw.rollout();
    const agent = agentCall(gw, r, "chat/completions", ask("hi"));
    const req = await take(gw, r.id);
    const ack = await gw.api("POST", `/requests/${req.request_id}/ack`, { lease: 30 });
    assert.equal(ack.status, 200, JSON.stringify(ack.json));
    assert.equal(ack.json.lease_s, 30);
    assert.ok(ack.json.expires_at > Date.now() + 29_000);
    // The lease outlives the ack timeout: nobody else gets the request.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await gw.api("GET", `/requests/next?wait=0`)).status, 204);
    const renew = await gw.api("POST", `/requests/${req.request_id}/renew`);
    assert.equal(renew.status, 200);
    assert.equal(renew.json.lease_s, 30, "a renewal without a lease keeps the one granted");
    for (const lease of [2_147_484, 0, -1, "x"]) {
      const bad = await gw.api("POST", `/requests/${req.request_id}/renew`, { lease });
      assert.equal(bad.status, 400, `lease ${lease}`);
      assert.match(bad.json.error.message, /lease/);
    }
    const overflow = await gw.api("GET", `/requests/next?wait=0&lease=2147484`);
    assert.equal(overflow.status, 400);
    assert.match(overflow.json.error.message, /at most 3600 seconds, got 2147484/);
    await gw.api("POST", `/requests/${req.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    assert.equal((await agent).status, 200);
    const status = await gw.api("GET", "/status");
    assert.deepEqual(status.json.requests, {
      queued: 0,
      delivered: 0,
      leased: 0,
      redelivered: 0,
      withdrawn: 0,
    });
  });
});

Deno.test("dropped long poll: an unacknowledged request is offered again, over HTTP", async () => {
  await withGateway({ delivery: { ackTimeoutMs: 200 } }, async (gw) => {
    const r = await gw.rollout();
    const agent = agentCall(gw, r, "chat/completions", ask("hi"));
    const lost = await take(gw, r.id); // the trainer that got it never acks (its answer was lost)
    const again = await take(gw, r.id);
    assert.equal(again.request_id, lost.request_id);
    await gw.api("POST", `/requests/${again.request_id}/ack`);
    await gw.api("POST", `/requests/${again.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    const answer = await agent;
    assert.equal(answer.status, 200);
    assert.equal(answer.json.choices[0].message.content, "Hello");
    assert.equal((await gw.api("GET", "/status")).json.requests.redelivered, 1);
  });
});

Deno.test("trainer never answers: the turn times out with a retryable 503, the request is withdrawn", async () => {
  await withGateway({ timeouts: { turnMs: 400 } }, async (gw) => {
    const r = await gw.rollout();
    const plain = agentCall(gw, r, "messages", { ...ask("plain"), max_tokens: 16 });
    const streamed = fetch(`${gw.url}/rollout/${r.id}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
      body: JSON.stringify({ ...ask("streamed"), max_tokens: 16, stream: true }),
      signal: AbortSignal.timeout(30_000), // the gateway's 0.4 s turn timeout should end it first
    });
    const first = await take(gw, r.id);
    await gw.api("POST", `/requests/${first.request_id}/ack`);

    const a = await plain;
    assert.equal(a.status, 503);
    assert.equal(a.json.error.type, "overloaded_error", "Anthropic clients retry this type");
    assert.match(a.json.error.message, /no answer within 0.4 s .*retry/);
    const s = await streamed;
    assert.equal(s.status, 200);
    const { events } = parseSse(await s.text());
    assert.equal(events.at(-1)!.event, "error");
    assert.equal(events.at(-1)!.json.error.type, "overloaded_error");

    assert.equal(await gw.gw.rollouts.pendingRequests(), 0, "both requests left the gate");
    const late = await gw.api("POST", `/requests/${first.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    assert.equal(late.status, 410);
    assert.match(late.json.error.message, /withdrawn \(no answer within 0.4 s/);
    const renew = await gw.api("POST", `/requests/${first.request_id}/renew`);
    assert.equal(renew.status, 410, "a worker renewing its lease learns it too");

    // The agent's retry is a fresh request the trainer can answer.
    const retry = agentCall(gw, r, "messages", { ...ask("plain"), max_tokens: 16 });
    const again = await take(gw, r.id);
    assert.notEqual(again.request_id, first.request_id);
    await gw.api("POST", `/requests/${again.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    assert.equal((await retry).status, 200);
  });
});

Deno.test("agent gone: the request is withdrawn after the grace; a retry within it re-attaches", async () => {
  await withGateway({ timeouts: { abandonGraceMs: 300 } }, async (gw) => {
    const r = await gw.rollout();
    const body = JSON.stringify(ask("hi", { stream: true }));
    const send = (signal?: AbortSignal) =>
      fetch(`${gw.url}/rollout/${r.id}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
        body,
        signal: signal ?? AbortSignal.timeout(30_000),
      });

    // Leaves, then retries within the grace: the same request, one turn.
    const leaving = new AbortController();
    const first = await send(leaving.signal);
    const req = await take(gw, r.id);
    await gw.api("POST", `/requests/${req.request_id}/ack`);
    leaving.abort();
    await first.body?.cancel().catch(() => {});
    await new Promise((r) => setTimeout(r, 100));
    const retry = send();
    await new Promise((r) => setTimeout(r, 400)); // past the grace: the retry holds it
    const done = await gw.api("POST", `/requests/${req.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    assert.equal(done.status, 200, JSON.stringify(done.json));
    const { events } = parseSse(await (await retry).text());
    assert.equal(events.at(-1)!.data, "[DONE]");
    const info = await gw.api("GET", `/rollouts/${r.id}`);
    assert.equal(info.json.turns.total, 1, "the retry re-attached: one turn");

    // Leaves for good: withdrawn once the grace is over; the trainer gets 410.
    const gone = new AbortController();
    const second = await fetch(`${gw.url}/rollout/${r.id}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
      body: JSON.stringify(ask("another", { stream: true })),
      signal: gone.signal,
    });
    const req2 = await take(gw, r.id);
    await gw.api("POST", `/requests/${req2.request_id}/ack`);
    gone.abort();
    await second.body?.cancel().catch(() => {});
    await until(async () => await gw.gw.rollouts.pendingRequests() === 0, "the request withdrawn");
    const late = await gw.api("POST", `/requests/${req2.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    assert.equal(late.status, 410);
    assert.match(late.json.error.message, /agent disconnected and did not retry within 0.3 s/);
  });
});

Deno.test("abandoned requests are withdrawn, not left queued (1,000 agents that hang up)", async () => {
  await withGateway({ timeouts: { abandonGraceMs: 200 } }, async (gw) => {
    const rollouts = await Promise.all(Array.from({ length: 20 }, () => gw.rollout()));
    const agents = new AbortController();
    const hangUps: Promise<void>[] = [];
    for (let i = 0; i < 1000; i++) {
      const r = rollouts[i % 20];
      hangUps.push(
        fetch(`${gw.url}/rollout/${r.id}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
          body: JSON.stringify(ask(`question ${i}`)),
          signal: agents.signal,
        }).then(() => {}, () => {}),
      );
    }
    await until(
      async () => await gw.gw.rollouts.pendingRequests() === 1000,
      "1,000 requests queued",
      120_000,
    );
    agents.abort(); // every agent hangs up
    await Promise.all(hangUps);
    await until(
      async () => await gw.gw.rollouts.pendingRequests() === 0,
      "every request withdrawn",
      30_000,
    );
    assert.equal((await gw.api("GET", "/requests/next?wait=0")).status, 204);
    assert.equal(gw.gw.rollouts.pendingTurns(), 0);
  });
});
