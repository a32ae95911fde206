/**
 * `VllmRender` over a socket that replays the real vLLM's recorded answers
 * (`__fixtures__/vllm_render/`): a refused conversation (400) is an `Error` the turn reports as a
 * render failure, a server that is not set up for it (an unknown model: 404) a `GenerationError`.
 * The real server: `tests/engine/engine_render_test.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { GenerationError } from "./backend.ts";
import { VllmRender } from "./vllm_render.ts";

async function recorded(name: string): Promise<{ status: number; body: unknown }> {
  const url = new URL(`./__fixtures__/vllm_render/${name}.json`, import.meta.url);
  return JSON.parse(await Deno.readTextFile(url)).response;
}

/** A socket answering every POST with `answer`. */
function replay(answer: { status: number; body: unknown }) {
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    await req.body?.cancel();
    return Response.json(answer.body, { status: answer.status });
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

const request = {
  messages: [{ role: "user" as const, content: "hi" }],
  tools: [],
  templateKwargs: {},
  addGenerationPrompt: true,
};

Deno.test("vLLM render: ids; a refused conversation is an Error, a misconfigured server a GenerationError", async () => {
  const ok = replay(await recorded("render_first_turn"));
  try {
    const ids = await new VllmRender({ url: ok.url }).render(request);
    assert.equal(ids[0], 151644);
  } finally {
    await ok.close();
  }
  const tooLong = replay(await recorded("render_too_long"));
  try {
    const e = await new VllmRender({ url: tooLong.url }).render(request).catch((e) => e);
    assert.ok(e instanceof Error && !(e instanceof GenerationError), String(e));
    assert.match(e.message, /refused the conversation \(400\): This model's maximum context/);
  } finally {
    await tooLong.close();
  }
  const unknown = replay(await recorded("render_unknown_model"));
  try {
    const e = await new VllmRender({ url: unknown.url, retries: 0 }).render(request).catch((e) =>
      e
    );
    assert.ok(e instanceof GenerationError && e.kind === "engine_failed", String(e));
    assert.match(e.message, /404.*does not exist/);
  } finally {
    await unknown.close();
  }
});
