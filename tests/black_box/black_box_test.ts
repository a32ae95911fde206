/**
 * Black-box mode: agents' requests are forwarded to a hosted API (a loopback TEST DOUBLE that
 * replays real captured streams), the answers are relayed, and the rollout keeps a
 * message-level record without token ids.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { AnthropicUpstream, createGateway, OpenAIUpstream } from "../../gateway/mod.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { FakeUpstreamTestDouble, FIXTURES } from "./fake_upstream.ts";

async function setup() {
  const upstream = new FakeUpstreamTestDouble();
  const gw = createGateway({
    model: await sharedModel(),
    keepAliveMs: 200,
    upstreams: {
      anthropic: new AnthropicUpstream({ baseURL: upstream.url, apiKey: "upstream-key" }),
      openai: new OpenAIUpstream({ baseURL: upstream.url + "/v1", apiKey: "upstream-key" }),
    },
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  const create = async (backend: string) => {
    const r = await fetch(url + "/api/rollouts", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ backend }),
    });
    return await r.json() as { id: string; token: string; base_url: string };
  };
  const samples = async (id: string) => {
    const r = await fetch(`${url}/api/rollouts/${id}/finish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    return (await r.json()).samples;
  };
  return {
    upstream,
    url,
    create,
    samples,
    async close() {
      await server.shutdown();
      await upstream.close();
    },
  };
}

Deno.test("black-box anthropic: Claude Code's two requests relayed, message-level record", async () => {
  const t = await setup();
  try {
    const r = await t.create("anthropic");
    const client = new Anthropic({ baseURL: r.base_url, apiKey: r.token, maxRetries: 0 });
    const [first, second] = FIXTURES.anthropic.map((f) => f.body);
    // deno-lint-ignore no-explicit-any
    const stream = client.messages.stream(first as any);
    const message = await stream.finalMessage();
    assert.deepEqual(message.content.map((b) => b.type), ["thinking", "text", "tool_use"]);
    // deno-lint-ignore no-explicit-any
    const answer = await client.messages.create({ ...(second as any), stream: false }, {
      timeout: 60_000,
    });
    assert.equal(answer.content.at(-1)?.type, "text");
    assert.equal(t.upstream.received.length, 2);
    const h = t.upstream.received[0].headers;
    // SDK 1.10 sends the API key as a bearer token.
    assert.ok(
      h.get("x-api-key") === "upstream-key" || h.get("authorization") === "Bearer upstream-key",
    );
    assert.ok(!h.get("authorization")?.includes(r.token), "the rollout token is not forwarded");
    const samples = await t.samples(r.id);
    assert.equal(samples.length, 1, "turn 2 extends turn 1: one chain");
    const s = samples[0];
    assert.equal(s.token_ids, false);
    assert.deepEqual(s.input_ids, []);
    assert.equal(s.turns.length, 2);
    const last = s.messages.at(-1);
    assert.equal(last.role, "assistant");
    assert.match(last.content, /Done/);
  } finally {
    await t.close();
  }
});

Deno.test("black-box openai: pi's chat requests and Codex's responses requests", async () => {
  const t = await setup();
  try {
    const chat = await t.create("openai");
    const client = new OpenAI({
      baseURL: chat.base_url + "/v1",
      apiKey: chat.token,
      maxRetries: 0,
    });
    const [c1, c2] = FIXTURES.chat.map((f) => f.body);
    const chunks = await client.chat.completions.create(
      { ...c1, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming,
    );
    let args = "";
    for await (const ch of chunks) {
      args += ch.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? "";
    }
    assert.deepEqual(JSON.parse(args), { command: "echo probe-ok > probe.txt && ls -a" });
    const drain = await client.chat.completions.create(
      { ...c2, stream: true } as unknown as OpenAI.ChatCompletionCreateParamsStreaming,
    );
    for await (const _ of drain) { /* drain */ }
    const chatSamples = await t.samples(chat.id);
    assert.equal(chatSamples.length, 1);
    assert.equal(
      chatSamples[0].messages.at(-1).content,
      "Done: created probe.txt and listed the directory.",
    );

    const resp = await t.create("openai");
    const rc = new OpenAI({ baseURL: resp.base_url + "/v1", apiKey: resp.token, maxRetries: 0 });
    const [r1, r2] = FIXTURES.responses.map((f) => f.body);
    const types: string[] = [];
    const streaming = (b: unknown) =>
      rc.responses.create(
        { ...(b as object), stream: true } as OpenAI.Responses.ResponseCreateParamsStreaming,
      );
    for await (const ev of await streaming(r1)) types.push(ev.type);
    assert.equal(types.at(-1), "response.completed");
    for await (const _ of await streaming(r2)) { /* drain */ }
    const respSamples = await t.samples(resp.id);
    assert.equal(respSamples.length, 1);
    assert.equal(respSamples[0].turns.length, 2);
  } finally {
    await t.close();
  }
});

Deno.test("black-box: a protocol the upstream does not serve is a 400 in the agent's shape", async () => {
  const t = await setup();
  try {
    const r = await t.create("anthropic");
    const res = await fetch(`${r.base_url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${r.token}` },
      body: JSON.stringify(FIXTURES.chat[0].body),
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.match(body.error.message, /black-box backend anthropic/);
    assert.equal(t.upstream.received.length, 0);
  } finally {
    await t.close();
  }
});

Deno.test("black-box: an upstream redirect to another host is not followed (the key and the conversation stay); within its origin it is", async () => {
  const elsewhere: Request[] = [];
  const other = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    elsewhere.push(req);
    return Response.json({ stolen: true });
  });
  const otherUrl = `http://127.0.0.1:${(other.addr as Deno.NetAddr).port}`;
  const real = new FakeUpstreamTestDouble();
  // The upstream the gateway was given: moves one path within itself, sends the rest away.
  let own = "";
  const redirecting: Deno.HttpServer = Deno.serve({
    port: 0,
    hostname: "127.0.0.1",
    onListen() {},
  }, (req): Response | Promise<Response> => {
    const path = new URL(req.url).pathname;
    if (path === "/moved/v1/messages") return fetch(real.url + "/v1/messages", req);
    return new Response(null, {
      status: 307,
      headers: {
        location: path.startsWith("/same") ? `${own}/moved${path.slice(5)}` : otherUrl + path,
      },
    });
  });
  const upstreamUrl = own = `http://127.0.0.1:${(redirecting.addr as Deno.NetAddr).port}`;
  const gw = createGateway({
    model: await sharedModel(),
    upstreams: {
      anthropic: new AnthropicUpstream({ baseURL: upstreamUrl, apiKey: "upstream-key" }),
      same: new AnthropicUpstream({ baseURL: upstreamUrl + "/same", apiKey: "upstream-key" }),
    },
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`;
  try {
    const ask = async (backend: string) => {
      const r = await (await fetch(url + "/api/rollouts", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ backend }),
      })).json();
      const res = await fetch(`${r.base_url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": r.token },
        body: JSON.stringify({ ...FIXTURES.anthropic[0].body, stream: false }),
      });
      return { status: res.status, json: await res.json() };
    };
    const away = await ask("anthropic");
    assert.ok(away.status >= 500, `refused: ${JSON.stringify(away.json)}`);
    assert.equal(away.json.type, "error");
    assert.match(
      away.json.error.message,
      /redirected to http:\/\/127\.0\.0\.1:\d+; rollgate follows/,
    );
    assert.equal(elsewhere.length, 0, "nothing reached the other host");

    const within = await ask("same");
    assert.equal(within.status, 200, JSON.stringify(within.json));
    assert.equal(real.received.length, 1);
  } finally {
    await server.shutdown();
    await redirecting.shutdown();
    await other.shutdown();
    await real.close();
  }
});
