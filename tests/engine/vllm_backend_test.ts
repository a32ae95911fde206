/**
 * The vLLM backend against a REAL vLLM (the CPU build 0.32.0 in `.venv-engine`, RL API on:
 * `--enable-scale-out`, `VLLM_SERVER_DEV_MODE=1`), through a real gateway over HTTP, the
 * official `openai` SDK as the agent. One server for the file; every case is a rollout on it.
 *
 * The model is the tiny random Qwen3 with `greedyStop` (`tests/engine/make_tiny_qwen3.py`):
 * sampled at temperature 1 its answers run to `max_tokens` (a length finish); greedy, it answers
 * `Hi<|im_end|>` (a stop finish). For every rollout: each trained position's recorded logprob
 * equals vLLM's own recompute (`prompt_logprobs`) within 1e-3, every sampled id carries loss in
 * exactly one sample, and a linear conversation is one chain.
 *
 * Two stand-ins sit between the gateway and the real engine, named as such: an HTTP proxy that
 * answers `/inference/*` with FastAPI's 404 (a TEST DOUBLE of a vLLM started without
 * `--enable-scale-out`: the backend falls back to `/v1/completions`), and a TCP proxy that drops
 * its first connection (a failure before the first byte, retried).
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import { createGateway } from "../../gateway/mod.ts";
import { type GenerationBackend, VllmBackend, type VllmOptions } from "../../generation/mod.ts";
import type { Sample, TurnTreeExport } from "../../trajectory/mod.ts";
import { checkEngineTruth } from "../support/engine_truth.ts";
import { checkLossOwnership } from "../support/loss_ownership.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { skipGroup } from "../support/skips.ts";
import { until } from "../support/until.ts";
import { engineMissing, startVllm, tinyQwen3, type VllmServer } from "../support/vllm_server.ts";

const GROUP = "real engine (vLLM CPU)";
const USER = { role: "user" as const, content: "Say hi." };

/** TEST DOUBLE of a vLLM without its RL API in front of the real one: `/inference/*` is a 404. */
function withoutRlApi(target: string) {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/inference/")) {
      return Response.json({ detail: "Not Found" }, { status: 404 });
    }
    const res = await fetch(target + url.pathname + url.search, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
    return new Response(res.body, { status: res.status, headers: res.headers });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

/** A TCP proxy to `target` that closes its first connection unanswered. */
function dropsFirstConnection(target: string) {
  const { hostname, port } = new URL(target);
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen = { connections: 0 };
  const pipes: Promise<unknown>[] = [];
  const accepting = (async () => {
    for await (const conn of listener) {
      if (++seen.connections === 1) {
        conn.close();
        continue;
      }
      const up = await Deno.connect({ hostname, port: Number(port) });
      pipes.push(
        conn.readable.pipeTo(up.writable).catch(() => {}),
        up.readable.pipeTo(conn.writable).catch(() => {}),
      );
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    seen,
    async close() {
      listener.close();
      await accepting;
      await Promise.race([Promise.all(pipes), new Promise((r) => setTimeout(r, 1000))]);
    },
  };
}

/** One of vLLM's Prometheus samples, summed over its label sets that contain `labels`. */
async function metric(url: string, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) && line.includes(labels)) sum += Number(line.split(" ").at(-1));
  }
  return sum;
}

async function post(url: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method: "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${path}: ${text}`);
}

interface Rig {
  vllm: VllmServer;
  /** Over every rollout: trained positions checked, the largest logprob difference. */
  truth: { positions: number; maxAbsDiff: number };
  url: string;
  // deno-lint-ignore no-explicit-any
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  agent(backend: string, sampling?: Record<string, unknown>): Promise<{ id: string; sdk: OpenAI }>;
}

/**
 * The rollout's samples, checked against the engine: truth ≤ 1e-3 at every trained position,
 * loss ownership over the tree, one chain (the conversations here are linear).
 */
async function checkRollout(rig: Rig, id: string, turns: number): Promise<Sample[]> {
  const fin = await rig.api("POST", `/rollouts/${id}/finish`, { reward: 1 });
  assert.equal(fin.status, 200, JSON.stringify(fin.json));
  const samples = fin.json.samples as Sample[];
  const tree = (await rig.api("GET", `/rollouts/${id}/tree`)).json as TurnTreeExport;
  assert.equal(tree.chains.length, 1, "a linear conversation is one chain");
  assert.equal(samples.length, 1);
  assert.equal(samples[0].turns.length, turns);
  checkLossOwnership(tree, samples);
  for (const s of samples) {
    const truth = await checkEngineTruth(rig.vllm.url, rig.vllm.servedName, s);
    assert.equal(truth.trained, s.num_sampled, "every sampled id trained and checked");
    rig.truth.positions += truth.trained;
    rig.truth.maxAbsDiff = Math.max(rig.truth.maxAbsDiff, truth.maxAbsDiff);
  }
  return samples;
}

/** The agent's streamed answer: its text and finish reason. */
async function streamed(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = "", finish: string | null = null;
  for await (const chunk of stream) {
    const d = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string };
    text += (d?.reasoning_content ?? "") + (d?.content ?? "");
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, finish };
}

Deno.test({
  name:
    "vLLM backend against a real vLLM: both endpoints, streaming, finishes, cancel, retry, version spans",
  ignore: skipGroup(GROUP, engineMissing()),
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const model = await sharedModel();
  const dir = await tinyQwen3(0, { greedyStop: true });
  const started = performance.now();
  const vllm = await startVllm({
    model: dir,
    scaleOut: true,
    devMode: true,
    maxModelLen: 4096,
    args: ["--enable-log-requests"],
  });
  console.log(
    `vLLM served the tiny model in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const plain = withoutRlApi(vllm.url);
  const flaky = dropsFirstConnection(vllm.url);
  const engine = (o: Partial<VllmOptions> & { url: string }): GenerationBackend =>
    new VllmBackend({ model: vllm.servedName, timeoutMs: 120_000, backoffMs: 50, ...o });
  const backends = {
    vllm: engine({ url: vllm.url }),
    "vllm-stream": engine({ url: vllm.url, stream: true }),
    "vllm-plain": engine({ url: plain.url }),
    "vllm-plain-stream": engine({ url: plain.url, stream: true }),
    "vllm-flaky": engine({ url: flaky.url, api: "generate" }),
  };
  const gw = createGateway({ model, backends, keepAliveMs: 200, timeouts: { abandonGraceMs: 50 } });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const rig: Rig = {
    vllm,
    truth: { positions: 0, maxAbsDiff: 0 },
    url,
    async api(method, path, body) {
      const res = await fetch(`${url}/api${path}`, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    },
    async agent(backend, sampling) {
      const r = await rig.api("POST", "/rollouts", { backend, ...(sampling ? { sampling } : {}) });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      const sdk = new OpenAI({
        baseURL: `${r.json.base_url}/v1`,
        apiKey: r.json.token,
        maxRetries: 0,
      });
      return { id: r.json.id, sdk };
    },
  };
  let failed = false;
  /** A case; vLLM's log is printed at the end when one failed. */
  const step = async (name: string, fn: () => Promise<void>) => {
    if (!await t.step(name, fn)) failed = true;
  };
  const turnsOf = async (id: string) => (await rig.api("GET", `/rollouts/${id}`)).json.turn_list;
  try {
    await post(vllm.url, "/update_weight_version", { new_version: "v-1" });

    await step(
      "RL API, not streamed: two turns, length finishes, the engine's ids and version",
      async () => {
        const { id, sdk } = await rig.agent("vllm");
        const first = await sdk.chat.completions.create({
          model: "p",
          messages: [USER],
          max_tokens: 6,
        });
        assert.equal(first.choices[0].finish_reason, "length");
        const again = await sdk.chat.completions.create({
          model: "p",
          max_tokens: 6,
          messages: [USER, first.choices[0].message, { role: "user", content: "Again." }],
        });
        assert.equal(again.choices[0].finish_reason, "length");
        const [s] = await checkRollout(rig, id, 2);
        assert.deepEqual(s.turn_spans.map((x) => x.weight_version), ["v-1", "v-1"]);
        assert.equal(s.logprobs_absent, undefined);
      },
    );

    await step(
      "RL API, --engine-stream, the agent streaming: answer and record as sent",
      async () => {
        const { id, sdk } = await rig.agent("vllm-stream");
        const answer = await streamed(
          await sdk.chat.completions.create({
            model: "p",
            messages: [USER],
            max_tokens: 8,
            stream: true,
          }),
        );
        assert.equal(answer.finish, "length");
        const [s] = await checkRollout(rig, id, 1);
        assert.equal(s.turn_spans[0].end - s.turn_spans[0].output_start, 8);
      },
    );

    await step("a stop finish: greedy, the model answers Hi<|im_end|>", async () => {
      const { id, sdk } = await rig.agent("vllm", { temperature: 0 });
      const answer = await sdk.chat.completions.create({
        model: "p",
        messages: [USER],
        max_tokens: 8,
      });
      assert.equal(answer.choices[0].finish_reason, "stop");
      assert.equal(answer.choices[0].message.content, "Hi");
      const [s] = await checkRollout(rig, id, 1);
      assert.equal(s.finish_reason, "stop");
      assert.equal(s.turn_spans[0].sampling?.temperature, 0);
    });

    await step("no RL API (404): /v1/completions, streamed and not", async () => {
      for (const backend of ["vllm-plain", "vllm-plain-stream"]) {
        const { id, sdk } = await rig.agent(backend);
        const first = await streamed(
          await sdk.chat.completions.create({
            model: "p",
            messages: [USER],
            max_tokens: 6,
            stream: true,
          }),
        );
        assert.equal(first.finish, "length");
        const again = await sdk.chat.completions.create({
          model: "p",
          max_tokens: 6,
          messages: [USER, { role: "assistant", content: first.text }, {
            role: "user",
            content: "More.",
          }],
        });
        assert.equal(again.choices[0].finish_reason, "length");
        const [s] = await checkRollout(rig, id, 2);
        // /v1/completions names no weight version.
        assert.deepEqual(s.turn_spans.map((x) => x.weight_version), [null, null], backend);
      }
      assert.equal(await (backends["vllm-plain"] as VllmBackend).api(), "completions");
      assert.equal(await (backends.vllm as VllmBackend).api(), "generate");
    });

    await step(
      "a retry before the first byte: the dropped connection is tried again",
      async () => {
        const { id, sdk } = await rig.agent("vllm-flaky");
        const answer = await sdk.chat.completions.create({
          model: "p",
          messages: [USER],
          max_tokens: 4,
        });
        assert.equal(answer.choices[0].finish_reason, "length");
        assert.ok(flaky.seen.connections >= 2, "the first connection dropped, a second one served");
        await checkRollout(rig, id, 1);
      },
    );

    /** Resolves once the engine sampled `n` more ids than when called (agents see random text only at the end). */
    const generating = async (n: number) => {
      const before = await metric(vllm.url, "vllm:generation_tokens_total");
      return () =>
        until(
          async () => await metric(vllm.url, "vllm:generation_tokens_total") >= before + n,
          `vLLM sampled ${n} ids`,
          60_000,
        );
    };

    await step("a client that disconnects cancels the generation on the engine", async () => {
      const aborts = () =>
        vllm.log().match(/Aborted request\(s\) generate-tokens-req_/g)?.length ?? 0;
      const aborted = aborts();
      const { id, sdk } = await rig.agent("vllm-stream");
      const controller = new AbortController();
      const sampled = await generating(2);
      const stream = await sdk.chat.completions.create(
        { model: "p", messages: [USER], max_tokens: 4000, stream: true },
        { signal: controller.signal },
      );
      const reading = streamed(stream).catch(() => null);
      await sampled();
      controller.abort();
      // The SDK ends an aborted stream (or throws): either way, before the answer's end.
      assert.equal((await reading)?.finish ?? null, null, "the agent left before the answer");
      // vLLM's own word (--enable-log-requests), naming the gateway's request id.
      await until(() => aborts() > aborted, "vLLM logs the generation aborted", 60_000);
      await until(
        async () => await metric(vllm.url, "vllm:num_requests_running") === 0,
        "vLLM runs no request",
        60_000,
      );
      await until(async () => (await turnsOf(id))[0]?.status === "failed", "the turn failed");
    });

    await step(
      "a weight update mid-generation (pause keep): the turn keeps both versions",
      async () => {
        const { id, sdk } = await rig.agent("vllm-stream");
        const sampled = await generating(2);
        const reading = streamed(
          await sdk.chat.completions.create({
            model: "p",
            messages: [USER],
            max_tokens: 48,
            stream: true,
          }),
        );
        await sampled();
        // Ids are being sampled: freeze the running request, relabel the weights, go on.
        await post(vllm.url, "/pause?mode=keep");
        await post(vllm.url, "/update_weight_version", { new_version: "v-2" });
        await post(vllm.url, "/resume");
        assert.equal((await reading).finish, "length");
        const [s] = await checkRollout(rig, id, 1);
        const [span] = s.turn_spans;
        assert.equal(span.weight_version, "v-1", "the version its first token was sampled under");
        const runs = span.weight_versions ?? [];
        assert.deepEqual(runs.map(([, v]) => v), ["v-1", "v-2"], JSON.stringify(span));
        assert.equal(runs[0][0], span.output_start);
        assert.ok(runs[1][0] > span.output_start && runs[1][0] < span.end, "v-2 starts inside");
        assert.deepEqual(s.version_span, ["v-1", "v-2"]);
      },
    );
    console.log(
      `engine truth: ${rig.truth.positions} trained positions, max |recorded − vLLM| ${rig.truth.maxAbsDiff}`,
    );
  } catch (e) {
    failed = true;
    throw e;
  } finally {
    if (failed) console.error(vllm.log().slice(-3000));
    await server.shutdown();
    await Promise.all([plain.close(), flaky.close()]);
    await vllm.stop();
  }
});
