/**
 * The vLLM stream reader on the wire's edge cases (events ended by `\r\n\r\n`, an event's JSON
 * split over two `data:` lines, chunk boundaries inside a line, keep-alive comments) and on
 * streams a real vLLM 0.32 (CPU build, tiny Qwen3) sent from both endpoints, recorded in
 * `__fixtures__/`.
 */
import assert from "node:assert/strict";
import { readVllmStream } from "./vllm_stream.ts";

function streamed(parts: string[]): Response {
  const bytes = new TextEncoder();
  return new Response(
    new ReadableStream({
      start(c) {
        for (const p of parts) c.enqueue(bytes.encode(p));
        c.close();
      },
    }),
  );
}

Deno.test("vLLM stream: CRLF events, multi-line data and split chunks read as the engine sent them", async () => {
  const first = JSON.stringify({
    weight_version: "w-1",
    choices: [{ token_ids: [11, 12], logprobs: { token_logprobs: [-0.5, -0.25] } }],
  });
  const second = JSON.stringify({
    choices: [{ token_ids: [13], logprobs: { token_logprobs: [-1] }, finish_reason: "stop" }],
  });
  const cut = second.indexOf(",");
  const wire = `: keep-alive\r\n\r\ndata: ${first}\r\n\r\n` +
    // One event, its JSON over two data lines (joined with a newline, which JSON allows).
    `data: ${second.slice(0, cut)}\r\ndata: ${second.slice(cut)}\r\n\r\n` +
    "data: [DONE]\r\n\r\n";
  // Cut the wire every 7 bytes: across `\r` and `\n`, inside `data:`.
  const parts = wire.match(/[\s\S]{1,7}/g)!;
  const seen: number[][] = [];
  const body = await readVllmStream(
    streamed(parts),
    "completions",
    "vllm",
    (ids) => seen.push(ids),
  );
  assert.deepEqual(body, {
    weight_version: "w-1",
    token_ids: [11, 12, 13],
    logprobs: [-0.5, -0.25, -1],
    finish_reason: "stop",
    routed_experts: undefined,
    sampling_mask: null,
    weight_versions: undefined,
  });
  assert.deepEqual(seen, [[11, 12], [13]]);
});

Deno.test("vLLM stream: a chunk that is not JSON is an engine failure naming the engine", async () => {
  await assert.rejects(
    readVllmStream(streamed(["data: {oops\n\n"]), "completions", "vllm at http://x"),
    { name: "GenerationError", message: /vllm at http:\/\/x streamed a chunk that is not JSON/ },
  );
});

const fixture = (name: string) =>
  Deno.readTextFileSync(new URL(`./__fixtures__/${name}`, import.meta.url));

Deno.test("vLLM stream: both endpoints' recorded streams give the ids, logprobs and spans sent", async () => {
  const whole = JSON.parse(fixture("vllm_completions.json")).choices[0];
  for (
    const [api, name] of [
      ["completions", "vllm_completions_stream.txt"],
      ["generate", "vllm_generate_stream.txt"],
    ] as const
  ) {
    const seen: number[][] = [];
    const got = await readVllmStream(
      streamed([fixture(name)]),
      api,
      "vllm",
      (ids) => seen.push(ids),
    );
    // Seeded: the same three ids and logprobs as the recorded whole answer's first three.
    assert.deepEqual(got.token_ids, whole.token_ids.slice(0, 3), name);
    assert.deepEqual(got.logprobs, whole.logprobs.token_logprobs.slice(0, 3), name);
    assert.deepEqual(seen, [[103095], [8763], [134855]], `${name}: one chunk per id`);
    assert.equal(got.finish_reason, "length");
    if (api === "generate") {
      assert.deepEqual(got.logprob_ids, got.token_ids);
      assert.deepEqual(got.weight_versions, [{ version: "v2", start: 0, end: 3 }]);
    }
  }
  // Paused with `keep` after 4 ids, the version updated, resumed: the last chunk has both spans.
  const span = await readVllmStream(
    streamed([fixture("vllm_generate_stream_span.txt")]),
    "generate",
    "vllm",
  );
  assert.equal((span.token_ids as number[]).length, 8);
  assert.deepEqual(span.weight_versions, [
    { version: "v-1", start: 0, end: 4 },
    { version: "v-2", start: 4, end: 8 },
  ]);
});

Deno.test("vLLM stream: a chunk with ids and no logprobs or kept set leaves the turn without", async () => {
  const chunk = (ids: number[], extra: Record<string, unknown>) =>
    `data: ${JSON.stringify({ choices: [{ token_ids: ids, ...extra }] })}\n\n`;
  const got = await readVllmStream(
    streamed([
      chunk([5], {
        logprobs: { content: [{ token_id: 5, logprob: -1 }] },
        sampling_mask: [[5, 6]],
      }),
      chunk([7], { logprobs: null, sampling_mask: null }),
      chunk([], { finish_reason: "length" }),
      "data: [DONE]\n\n",
    ]),
    "generate",
    "vllm",
  );
  assert.deepEqual(got.token_ids, [5, 7]);
  assert.equal(got.logprobs, null);
  assert.equal(got.sampling_mask, null);
});

Deno.test("vLLM stream: an error chunk is an engine failure with vLLM's message", async () => {
  const error = {
    error: { message: "Generation error: out of blocks", type: "Internal", code: 500 },
  };
  await assert.rejects(
    readVllmStream(
      streamed([`data: ${JSON.stringify(error)}\n\ndata: [DONE]\n\n`]),
      "generate",
      "vLLM at x",
    ),
    {
      name: "GenerationError",
      message: /vLLM at x failed the generation: Generation error: out of blocks/,
    },
  );
});
