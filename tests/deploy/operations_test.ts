/**
 * Operating `serve` over real sockets: `/metrics` counts turns, tokens, the added latency and
 * failures by kind; SIGTERM stops new turns, lets the in-flight one finish (its trainer can still
 * complete it) and exits 0; a turn still unanswered when the grace period ends gets a clear error.
 */
import assert from "node:assert/strict";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";

const ADMIN = "operations-test-admin-token-0123";
const AUTH = { authorization: `Bearer ${ADMIN}` };
const JSON_AUTH = { ...AUTH, "content-type": "application/json" };
// Qwen3 ids of "Hello<|im_end|>".
const HELLO = [9707, 151645];

async function api(gw: GatewayProcess, method: string, path: string, body?: unknown) {
  const res = await fetch(gw.url + path, {
    method,
    headers: JSON_AUTH,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** An agent's turn, left running: resolves with its HTTP status and JSON body. */
async function agentTurn(gw: GatewayProcess, content: string) {
  const rollout = (await api(gw, "POST", "/api/rollouts", {})).body;
  const answer = fetch(`${rollout.base_url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${rollout.token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content }] }),
  }).then(async (r) => ({ status: r.status, body: await r.json() }));
  return { rollout, answer };
}

async function claim(gw: GatewayProcess, rollout: string) {
  const next = await api(gw, "GET", `/api/requests/next?wait=20&rollout=${rollout}`);
  assert.equal(next.status, 200);
  return next.body as { request_id: string; prompt_ids: number[] };
}

function metric(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

Deno.test("/metrics: turns, tokens in and out, added latency, failures by kind, per backend", async () => {
  const gw = await startGateway([], { ROLLGATE_ADMIN_TOKEN: ADMIN });
  try {
    const ok = await agentTurn(gw, "hello");
    const pending = await claim(gw, ok.rollout.id);
    const during = await (await fetch(`${gw.url}/metrics`, { headers: AUTH })).text();
    assert.equal(metric(during, 'rollgate_turns_in_flight{backend="gate"}'), 1);
    assert.equal(metric(during, "rollgate_pending_requests"), 1);
    await api(gw, "POST", `/api/requests/${pending.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    assert.equal((await ok.answer).status, 200);

    const failed = await agentTurn(gw, "fail me");
    const doomed = await claim(gw, failed.rollout.id);
    await api(gw, "POST", `/api/requests/${doomed.request_id}/fail`, { error: "engine oom" });
    assert.equal((await failed.answer).status, 502);

    const res = await fetch(`${gw.url}/metrics`, { headers: AUTH });
    assert.match(res.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const gate = '{backend="gate"}';
    assert.equal(metric(text, 'rollgate_turns_total{backend="gate",outcome="done"}'), 1);
    assert.equal(metric(text, 'rollgate_turns_total{backend="gate",outcome="failed"}'), 1);
    assert.equal(metric(text, `rollgate_tokens_in_total${gate}`), pending.prompt_ids.length);
    assert.equal(metric(text, `rollgate_tokens_out_total${gate}`), HELLO.length);
    assert.equal(metric(text, `rollgate_added_latency_seconds_count${gate}`), 1);
    assert.ok(metric(text, `rollgate_added_latency_seconds_sum${gate}`)! < 5);
    assert.equal(metric(text, 'rollgate_errors_total{backend="gate",kind="trainer_failed"}'), 1);
    assert.equal(metric(text, `rollgate_turns_in_flight${gate}`), 0);
    assert.equal(metric(text, "rollgate_pending_requests"), 0);
    assert.equal(metric(text, "rollgate_active_rollouts"), 2);
    assert.equal((await fetch(`${gw.url}/metrics`)).status, 401, "needs the admin token");
  } finally {
    await gw.stop();
  }
});

Deno.test("SIGTERM: not ready, no new turns, the in-flight turn finishes, exit 0", async () => {
  const gw = await startGateway([], { ROLLGATE_ADMIN_TOKEN: ADMIN });
  try {
    const inFlight = await agentTurn(gw, "hello");
    const pending = await claim(gw, inFlight.rollout.id);
    const other = (await api(gw, "POST", "/api/rollouts", {})).body;
    gw.kill("SIGTERM");

    let ready = await fetch(`${gw.url}/ready`);
    for (let i = 0; ready.status === 200 && i < 100; i++) {
      await ready.body?.cancel();
      await new Promise((r) => setTimeout(r, 50));
      ready = await fetch(`${gw.url}/ready`);
    }
    assert.equal(ready.status, 503);
    assert.deepEqual((await ready.json()).checks[1], {
      name: "accepting turns",
      ok: false,
      detail: "draining: shutting down, no new turns",
    });
    const refused = await fetch(`${other.base_url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": other.token, "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        max_tokens: 10,
        messages: [{ role: "user", content: "new work" }],
      }),
    });
    assert.equal(refused.status, 503);
    const err = await refused.json();
    assert.equal(err.error.type, "overloaded_error", "Claude Code retries this one");
    assert.match(err.error.message, /shutting down/);

    const done = await api(gw, "POST", `/api/requests/${pending.request_id}/complete`, {
      output_ids: HELLO,
      finish_reason: "stop",
    });
    assert.equal(done.status, 200, "the trainer API still works while draining");
    const answer = await inFlight.answer;
    assert.equal(answer.status, 200);
    assert.equal(answer.body.choices[0].message.content, "Hello");
    const status = await gw.exited;
    assert.equal(status.code, 0);
    assert.match(gw.output(), /draining 1 turn in flight \(grace 30 s\)/);
    assert.match(gw.output(), /drained: 1 turn finished in \d+ ms/);
  } finally {
    await gw.stop();
  }
});

Deno.test("SIGTERM: a turn unanswered when the grace period ends gets an error; exit 0", async () => {
  const gw = await startGateway(["--drain-grace", "1"], { ROLLGATE_ADMIN_TOKEN: ADMIN });
  try {
    const stuck = await agentTurn(gw, "nobody answers");
    await claim(gw, stuck.rollout.id);
    gw.kill("SIGTERM");
    const answer = await stuck.answer;
    assert.equal(answer.status, 503);
    assert.match(
      answer.body.error.message,
      /shut down before this turn was answered \(grace 1 s\)/,
    );
    assert.equal((await gw.exited).code, 0);
    assert.match(gw.output(), /drained: 0 turns finished, 1 turn abandoned/);
  } finally {
    await gw.stop();
  }
});
