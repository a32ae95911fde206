/** Host-side tools and the agent-exit signal over real HTTP. */
import assert from "node:assert/strict";
import { createGateway } from "../../gateway/mod.ts";
import { sharedModel } from "../support/scripted_policy.ts";

async function withGateway(fn: (url: string) => Promise<void>) {
  const gw = createGateway({
    model: await sharedModel(),
    hostTools: {
      add: (_r, args) => (args as { a: number; b: number }).a + (args as { b: number }).b,
    },
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  try {
    await fn(`http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`);
  } finally {
    await server.shutdown();
  }
}

async function post(url: string, body: unknown, token?: string) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("host tools: submit and a custom tool run on the host and are recorded", async () => {
  await withGateway(async (url) => {
    const r = await post(`${url}/api/rollouts`, { id: "h1" });
    const base = r.body.base_url;
    const sum = await post(`${base}/v1/tools/add`, { a: 2, b: 3 });
    assert.deepEqual(sum, { status: 200, body: { result: 5 } });
    const submit = await post(`${url}/v1/tools/submit`, { answer: "done" }, r.body.token);
    assert.equal(submit.status, 200);
    assert.deepEqual(submit.body.result, { submitted: true, args: { answer: "done" } });
    const exit = await post(`${base}/v1/exit`, { exit_code: 0, reason: "finished" });
    assert.equal(exit.status, 200);
    const info = await (await fetch(`${url}/api/rollouts/h1`)).json();
    assert.deepEqual(info.host_calls.map((c: { tool: string }) => c.tool), ["add", "submit"]);
    assert.equal(info.agent_exit.exit_code, 0);
    assert.equal(info.agent_exit.reason, "finished");
  });
});

Deno.test("host tools: unknown tool 404, unknown rollout 404, other rollout's token 403, finished 409", async () => {
  await withGateway(async (url) => {
    const a = (await post(`${url}/api/rollouts`, { id: "a" })).body;
    const b = (await post(`${url}/api/rollouts`, { id: "b" })).body;
    const unknown = await post(`${a.base_url}/v1/tools/nope`, {});
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.error.message, /no host tool nope/);
    assert.equal((await post(`${url}/rollout/zz/v1/tools/submit`, {})).status, 404);
    assert.equal((await post(`${a.base_url}/v1/tools/submit`, {}, b.token)).status, 403);
    const bad = await fetch(`${a.base_url}/v1/tools/submit`, { method: "POST", body: "{oops" });
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    await post(`${url}/api/rollouts/a/finish`, {});
    assert.equal((await post(`${a.base_url}/v1/exit`, {})).status, 409);
    const info = await (await fetch(`${url}/api/rollouts/b`)).json();
    assert.equal(info.host_calls.length, 0, "no call leaked into another rollout");
  });
});
