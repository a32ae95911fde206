/**
 * Regression: the gate kept every prompt it ever served (issue 20). Its abort listener on the
 * turn's signal outlived the request, and the runner kept each turn's abort controller as long as
 * the turn, so a gateway in gate mode ran out of memory after ~10,000 turns.
 *
 * Each backend here serves many turns over real HTTP (streamed, not streamed, and agents that
 * leave before their answer); every generation request it got and every prompt it read is
 * watched by a `FinalizationRegistry`. Once the turns have settled and the heap is collected,
 * every one of them must be gone: nothing keeps a settled request alive.
 */
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import Anthropic from "@anthropic-ai/sdk";
import { AnthropicUpstream, createGateway } from "../../gateway/mod.ts";
import type { GenerationBackend, GenerationRequest } from "../../generation/mod.ts";
import { agentCall, startGateway } from "./loopback_gateway.ts";
import { READ_FILE, startRig } from "../backends/engine_gateway.ts";
import { FakeUpstreamTestDouble, FIXTURES } from "../black_box/fake_upstream.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { ImageDirectory } from "../../journal/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import type { ImageStore } from "../../trajectory/mod.ts";
import { fixtureImage } from "../support/image_files.ts";
import { qwen3VlModelDir } from "../support/vision_models.ts";

v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;

/** Objects that must be collected once their turns settled. */
class Watched {
  readonly #registry = new FinalizationRegistry<string>((what) => this.#collected.push(what));
  readonly #collected: string[] = [];
  registered = 0;

  watch(what: string, value: object): void {
    this.registered++;
    this.#registry.register(value, what);
  }

  /** Collects until everything watched is gone (or 50 rounds passed); how many are left. */
  async leftAfterCollection(): Promise<number> {
    for (let round = 0; round < 50 && this.#collected.length < this.registered; round++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.registered - this.#collected.length;
  }
}

/** Watches every request `backend` gets, and the prompt in it. */
function watchRequests(backend: GenerationBackend, watched: Watched): void {
  const generate = backend.generate.bind(backend);
  backend.generate = (req: GenerationRequest) => {
    watched.watch(`${backend.name} request ${req.requestId}`, req);
    watched.watch(`${backend.name} prompt of ${req.requestId}`, req.promptIds);
    return generate(req);
  };
}

const TURNS = 24;

function chatBody(turn: number, stream: boolean) {
  return {
    model: "rollgate-policy",
    stream,
    messages: [{ role: "user", content: `Question number ${turn}: what is ${turn} + ${turn}?` }],
  };
}

Deno.test("settled requests are not kept alive: the gate, answered or abandoned", async () => {
  const watched = new Watched();
  const gw = await startGateway({ timeouts: { abandonGraceMs: 20 } });
  try {
    watchRequests(gw.gw.gate, watched);
    const policy = gw.policy();
    for (let i = 0; i < TURNS; i++) {
      const r = await gw.rollout();
      const answered = await agentCall(gw, r, "chat/completions", chatBody(i, i % 2 === 0));
      assert.equal(answered.status, 200, JSON.stringify(answered.json));
    }
    await policy.stop();
    // Agents that leave before a trainer answers: their requests are withdrawn after the grace.
    for (let i = 0; i < 6; i++) {
      const r = await gw.rollout();
      const leave = new AbortController();
      const sent = fetch(`${gw.url}/rollout/${r.id}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${r.token}`, "content-type": "application/json" },
        body: JSON.stringify(chatBody(i, true)),
        signal: leave.signal,
      }).then((res) => res.body?.cancel(), () => {});
      while (gw.gw.gate.pendingCount(r.id) === 0) await new Promise((t) => setTimeout(t, 5));
      leave.abort();
      await sent;
      while (gw.gw.runner.pendingTurns(r.id) > 0) await new Promise((t) => setTimeout(t, 5));
    }
    assert.equal(watched.registered, 2 * (TURNS + 6));
    assert.equal(await watched.leftAfterCollection(), 0, "settled gate requests still reachable");
  } finally {
    await gw.close();
  }
});

Deno.test("settled requests are not kept alive: vLLM and SGLang", async () => {
  for (const engine of ["vllm", "sglang"]) {
    const watched = new Watched();
    const rig = await startRig({ defaultBackend: engine });
    try {
      watchRequests(rig.gw.runner.backends[engine], watched);
      for (let i = 0; i < TURNS; i++) {
        const agent = rig.agent(await rig.rollout());
        const answer = await agent.chat.completions.create({
          model: "rollgate-policy",
          messages: [{ role: "user", content: `Read the README, turn ${i}.` }],
          tools: [READ_FILE],
        });
        assert.equal(answer.choices[0].message.tool_calls?.length, 1);
      }
      assert.equal(watched.registered, 2 * TURNS);
      assert.equal(await watched.leftAfterCollection(), 0, `settled ${engine} requests reachable`);
    } finally {
      await rig.close();
    }
  }
});

Deno.test("settled requests are not kept alive: black-box upstream", async () => {
  const watched = new Watched();
  const fake = new FakeUpstreamTestDouble();
  const upstream = new AnthropicUpstream({ baseURL: fake.url, apiKey: "upstream-key" });
  const call = upstream.call.bind(upstream);
  upstream.call = (protocol, body, headers, signal) => {
    watched.watch("upstream body", body);
    watched.watch("upstream signal", signal);
    return call(protocol, body, headers, signal);
  };
  const gw = createGateway({
    model: await sharedModel(),
    keepAliveMs: 200,
    upstreams: { anthropic: upstream },
  });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, gw.app.fetch);
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    for (let i = 0; i < 8; i++) {
      const created = await fetch(`${url}/api/rollouts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ backend: "anthropic" }),
      });
      const r = await created.json();
      const client = new Anthropic({ baseURL: r.base_url, apiKey: r.token, maxRetries: 0 });
      // deno-lint-ignore no-explicit-any
      const first = FIXTURES.anthropic[0].body as any;
      const message = await client.messages.stream(first).finalMessage();
      assert.equal(message.content.at(-1)?.type, "tool_use");
    }
    assert.equal(watched.registered, 16);
    assert.equal(await watched.leftAfterCollection(), 0, "settled upstream calls still reachable");
  } finally {
    await server.shutdown();
    await fake.close();
  }
});

Deno.test("settled requests are not kept alive: the bytes of the images they showed", async () => {
  const watched = new Watched();
  const dir = await qwen3VlModelDir();
  const stored = await Deno.makeTempDir({ prefix: "rollgate-settled-images-" });
  const files = new ImageDirectory(stored);
  // The store the turns write to, watching each image's bytes (the request's decoded copy).
  const images: ImageStore = {
    putImage(hash, bytes) {
      watched.watch(`image ${hash.slice(0, 8)}`, bytes);
      return files.putImage(hash, bytes);
    },
    readImage: (hash) => files.readImage(hash),
  };
  const model = await PolicyModel.load({ dir });
  const answer = await model.tokenizer.encode("A picture.<|im_end|>");
  const gw = await startGateway({ model, images });
  try {
    const policy = gw.policy(() => answer);
    const png = await fixtureImage();
    for (let i = 0; i < 8; i++) {
      const r = await gw.rollout();
      // A distinct image per rollout (bytes after IEND change nothing a reader looks at).
      const data = (Uint8Array.of(...png.bytes, i) as unknown as { toBase64(): string }).toBase64();
      const user = {
        role: "user",
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data } }],
      };
      const first = await agentCall(gw, r, "messages", {
        model: "m",
        max_tokens: 9,
        messages: [user],
      });
      assert.equal(first.status, 200, JSON.stringify(first.json));
      // The next turn re-sends it: found stored, not written again, not kept either.
      const again = await agentCall(gw, r, "messages", {
        model: "m",
        max_tokens: 9,
        messages: [user, { role: "assistant", content: first.json.content }, {
          role: "user",
          content: "And?",
        }],
      });
      assert.equal(again.status, 200, JSON.stringify(again.json));
    }
    await policy.stop();
    assert.equal(watched.registered, 16);
    assert.equal(await watched.leftAfterCollection(), 0, "image bytes still reachable");
    assert.equal(gw.gw.store.list().length, 8, "while their rollouts (and trees) live");
  } finally {
    await gw.close();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(stored, { recursive: true });
  }
});
