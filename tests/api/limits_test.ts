/**
 * Admission and limits over real HTTP, each answered in the caller's error shape with a message
 * that names the limit: pending turns per rollout and in all, history size, host-tool payloads,
 * trainer outputs longer than `max_tokens`, and idle rollouts leaving memory.
 *
 * @module
 */
import assert from "node:assert/strict";
import { agentCall, withGateway } from "./loopback_gateway.ts";
import { until } from "../support/until.ts";

const anthropic = (content: string) => ({
  model: "m",
  max_tokens: 16,
  messages: [{ role: "user", content }],
});

Deno.test("admission: pending turns per rollout and in all are bounded with a 429 the agent retries", async () => {
  await withGateway({ limits: { maxPendingPerRollout: 2, maxPending: 3 } }, async (gw) => {
    const a = await gw.rollout();
    const b = await gw.rollout();
    const waiting = [
      agentCall(gw, a, "messages", anthropic("one")),
      agentCall(gw, a, "messages", anthropic("two")),
    ];
    await until(() => gw.gw.rollouts.pendingTurns(a.id) === 2, "two turns of a pending");
    const third = await agentCall(gw, a, "messages", anthropic("three"));
    assert.equal(third.status, 429);
    assert.equal(third.json.error.type, "rate_limit_error");
    assert.match(
      third.json.error.message,
      /already has 2 turns waiting.*--max-pending-per-rollout/,
    );
    // A retry of a pending turn is no new turn: not refused.
    waiting.push(agentCall(gw, a, "messages", anthropic("one")));

    waiting.push(
      agentCall(gw, b, "chat/completions", {
        model: "m",
        messages: [{ role: "user", content: "b1" }],
      }),
    );
    await until(() => gw.gw.rollouts.pendingTurns() === 3, "three turns pending");
    const over = await agentCall(gw, b, "chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "b2" }],
    });
    assert.equal(over.status, 429);
    assert.equal(over.json.error.type, "rate_limit_error");
    assert.match(over.json.error.message, /the gateway already has 3 turns waiting.*--max-pending/);

    gw.policy(({ turn }) => `answer ${turn}<|im_end|>`);
    for (const r of await Promise.all(waiting)) assert.equal(r.status, 200);
    assert.equal(gw.gw.rollouts.pendingTurns(), 0);
    const after = await agentCall(gw, a, "messages", anthropic("three"));
    assert.equal(after.status, 200, "admitted once the others were answered");
  });
});

Deno.test("history size: a request with more messages than the bound is a 413", async () => {
  await withGateway({ limits: { maxHistoryMessages: 5 } }, async (gw) => {
    const r = await gw.rollout();
    const messages = Array.from({ length: 6 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: `m${i}`,
    }));
    messages.push({ role: "user", content: "last" });
    const res = await agentCall(gw, r, "chat/completions", { model: "m", messages });
    assert.equal(res.status, 413);
    assert.match(res.json.error.message, /7 messages; the gateway accepts at most 5/);
    const count = await agentCall(gw, r, "messages/count_tokens", { model: "m", messages });
    assert.equal(count.status, 413);
    assert.equal(count.json.error.type, "request_too_large");
  });
});

Deno.test("Invalid string length: large tools/submit calls no longer break GET /api/rollouts", async () => {
  // Five 60 MB submits once made both listings answer 500 "Invalid string length". Each call and
  // each rollout's recorded calls are bounded now (scaled down here: 1 MiB per call, 5 per rollout;
  // `submit` echoes its arguments, so a call records twice its size).
  const limits = { maxToolBodyBytes: 1 << 20, maxToolBytesPerRollout: 5 << 20 };
  await withGateway({ limits }, async (gw) => {
    const r = await gw.rollout();
    const submit = (mb: number) =>
      agentCall(gw, r, "tools/submit", { patch: "x".repeat(mb * (1 << 20) - 100) });
    const big = await submit(2);
    assert.equal(big.status, 413);
    assert.match(big.json.error.message, /exceeds the gateway's limit of 1048576 bytes/);
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await submit(1)).status);
    // A call is admitted while the rollout's calls plus its arguments fit: 2 + 2 + 1 MiB.
    assert.deepEqual(statuses, [200, 200, 200, 413, 413]);
    const refused = await submit(1);
    assert.match(refused.json.error.message, /--max-tool-bytes-per-rollout/);
    const list = await gw.api("GET", "/rollouts");
    assert.equal(list.status, 200);
    const listed = list.json.rollouts.find((x: { id: string }) => x.id === r.id);
    assert.equal(listed.host_calls.length, 3);
    assert.equal(listed.host_calls[0].args, undefined, "the list carries no payloads");
    assert.ok(listed.host_calls[0].bytes > 1_000_000);
    const one = await gw.api("GET", `/rollouts/${r.id}`);
    assert.equal(one.status, 200);
    assert.equal(one.json.host_calls[1].args.patch.length, (1 << 20) - 100);
  });
});

Deno.test("trainer outputs longer than max_tokens are refused with a 400; a valid one lands", async () => {
  await withGateway({}, async (gw) => {
    const r = await gw.rollout();
    const agent = agentCall(gw, r, "messages", { ...anthropic("hi"), max_tokens: 3 });
    const next = await gw.api("GET", `/requests/next?wait=5&rollout=${r.id}`);
    assert.equal(next.json.sampling.max_tokens, 3);
    const rid = next.json.request_id;
    const long = await gw.api("POST", `/requests/${rid}/complete`, {
      output_ids: [9707, 9707, 9707, 151645],
      finish_reason: "stop",
    });
    assert.equal(long.status, 400);
    assert.match(long.json.error.message, /has 4 ids; request .* allows at most 3/);
    const append = await gw.api("POST", `/requests/${rid}/append`, {
      output_ids: [9707, 9707, 9707, 9707],
    });
    assert.equal(append.status, 400);
    const ok = await gw.api("POST", `/requests/${rid}/complete`, {
      output_ids: [9707, 151645],
      finish_reason: "stop",
    });
    assert.equal(ok.status, 200);
    assert.equal((await agent).status, 200);
  });
});

Deno.test("idle rollouts expire: dropped from memory, their id answers 410; busy ones stay", async () => {
  await withGateway({ timeouts: { rolloutIdleMs: 300 } }, async (gw) => {
    const idle = await gw.rollout();
    const busy = await gw.rollout();
    const waiting = agentCall(gw, busy, "messages", anthropic("still waiting"));
    await until(() => gw.gw.rollouts.pendingTurns(busy.id) === 1, "busy has a pending turn");
    await new Promise((r) => setTimeout(r, 500));
    await gw.api("GET", "/status"); // any request sweeps
    const gone = await gw.api("GET", `/rollouts/${idle.id}`);
    assert.equal(gone.status, 410);
    assert.match(
      gone.json.error.message,
      new RegExp(`rollout ${idle.id} expired .* without activity`),
    );
    const agent = await agentCall(gw, idle, "messages", anthropic("late"));
    assert.equal(agent.status, 410);
    assert.match(agent.json.error.message, /expired/);
    assert.equal(
      (await gw.api("GET", `/rollouts/${busy.id}`)).status,
      200,
      "a pending turn keeps it",
    );
    gw.policy(({ turn }) => `answer ${turn}<|im_end|>`);
    assert.equal((await waiting).status, 200);
    assert.equal((await gw.api("GET", "/rollouts/never")).status, 404);
  });
});
