/**
 * The vLLM stream reader on the wire's edge cases: events ended by `\r\n\r\n`, an event's JSON
 * split over two `data:` lines, chunk boundaries inside a line, and keep-alive comments.
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
  const body = await readVllmStream(streamed(parts), "vllm", (ids) => seen.push(ids));
  assert.deepEqual(body, {
    weight_version: "w-1",
    choices: [{
      token_ids: [11, 12, 13],
      logprobs: { token_logprobs: [-0.5, -0.25, -1] },
      finish_reason: "stop",
    }],
  });
  assert.deepEqual(seen, [[11, 12], [13]]);
});

Deno.test("vLLM stream: a chunk that is not JSON is an engine failure naming the engine", async () => {
  await assert.rejects(
    readVllmStream(streamed(["data: {oops\n\n"]), "vllm at http://x"),
    { name: "GenerationError", message: /vllm at http:\/\/x streamed a chunk that is not JSON/ },
  );
});
