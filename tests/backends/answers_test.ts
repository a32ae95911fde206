/**
 * How the engine backends read answers, called directly against a canned-answer HTTP server
 * (a TEST DOUBLE that returns one fixed body per test): missing or inconsistent fields are
 * errors naming the engine URL, unusual finish reasons are mapped, 4xx is not retried. (vLLM's
 * `/v1/completions` here; both of its endpoints are read in `generation/vllm_answer_test.ts`.)
 */
import assert from "node:assert/strict";
import {
  GenerationError,
  type GenerationRequest,
  SglangBackend,
  VllmBackend,
} from "../../generation/mod.ts";

const STOP = 151645;

function request(): GenerationRequest {
  return {
    requestId: "req_0123",
    rolloutId: "r1",
    turnId: "r1.0",
    promptIds: Int32Array.of(1, 2, 3),
    sampling: { max_tokens: 16, stop_token_ids: [STOP, 151643] },
    routingKey: "r1",
  };
}

/** Serves `body` with `status` to every request; counts requests. */
async function canned(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  fn: (url: string, hits: () => number) => Promise<void>,
) {
  let hits = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) => {
    await req.body?.cancel();
    hits++;
    return Response.json(body, { status, headers });
  });
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, () => hits);
  } finally {
    await server.shutdown();
  }
}

const vllmChoice = (c: Record<string, unknown>) => ({ choices: [{ index: 0, text: "", ...c }] });

Deno.test("vLLM: an answer without token_ids (vLLM < 0.10.2) is a clear error", async () => {
  await canned(200, vllmChoice({ finish_reason: "stop" }), {}, async (url) => {
    const err = await new VllmBackend({ url, api: "completions" }).generate(request()).catch((e) =>
      e
    );
    assert.ok(err instanceof GenerationError);
    assert.match(err.message, /token_ids.*0\.10\.2/);
    assert.ok(err.message.includes(url));
  });
});

Deno.test("vLLM: weight version from the response, null finish_reason mapped by the stop id", async () => {
  const body = { ...vllmChoice({ token_ids: [5, STOP], finish_reason: null }), weight_version: 3 };
  await canned(200, body, {}, async (url) => {
    const c = await new VllmBackend({ url, api: "completions" }).generate(request());
    assert.deepEqual(c, {
      output_ids: [5, STOP],
      finish_reason: "stop",
      weight_version: 3,
      logprobs_mode: "raw",
    });
  });
  await canned(
    200,
    vllmChoice({ token_ids: [5, 6] }),
    { "x-weight-version": "step-9" },
    async (url) => {
      const c = await new VllmBackend({ url, api: "completions" }).generate(request());
      assert.equal(c.finish_reason, "length");
      assert.equal(c.weight_version, "step-9");
    },
  );
});

Deno.test("vLLM: finish_reason abort and misaligned logprobs are errors", async () => {
  await canned(200, vllmChoice({ token_ids: [5], finish_reason: "abort" }), {}, async (url) => {
    await assert.rejects(
      new VllmBackend({ url, api: "completions" }).generate(request()),
      /finish_reason "abort"/,
    );
  });
  const misaligned = vllmChoice({
    token_ids: [5, 6],
    logprobs: { token_logprobs: [-0.1] },
    finish_reason: "length",
  });
  await canned(200, misaligned, {}, async (url) => {
    await assert.rejects(
      new VllmBackend({ url, api: "completions" }).generate(request()),
      /1 logprobs \(at most 0 each\) for 2 token ids/,
    );
  });
});

Deno.test("engines: a 4xx answer is refused at once, not retried", async () => {
  await canned(400, { error: "prompt too long" }, {}, async (url, hits) => {
    const err = await new VllmBackend({ url, api: "completions", retries: 3, backoffMs: 1 })
      .generate(request())
      .catch((e) => e);
    assert.ok(err instanceof GenerationError);
    assert.match(err.message, /refused the request \(400\).*prompt too long/);
    assert.equal(hits(), 1);
  });
});

Deno.test("SGLang: ids from output_ids, logprobs from the triples, abort is an error", async () => {
  const ok = {
    output_ids: [7, STOP],
    meta_info: {
      finish_reason: { type: "stop", matched: STOP },
      output_token_logprobs: [[-0.5, 7, null], [-0.01, STOP, null]],
      weight_version: "default",
    },
  };
  await canned(200, ok, {}, async (url) => {
    const c = await new SglangBackend({ url }).generate(request());
    assert.deepEqual(c, {
      output_ids: [7, STOP],
      logprobs: [-0.5, -0.01],
      finish_reason: "stop",
      weight_version: "default",
      logprobs_mode: "raw",
    });
  });
  const mismatched = {
    ...ok,
    meta_info: { ...ok.meta_info, output_token_logprobs: [[-0.5, 8, null], [-0.01, STOP, null]] },
  };
  await canned(200, mismatched, {}, async (url) => {
    await assert.rejects(new SglangBackend({ url }).generate(request()), /do not match output_ids/);
  });
  const aborted = {
    output_ids: [],
    meta_info: { finish_reason: { type: "abort", message: "weights updating" } },
  };
  await canned(200, aborted, {}, async (url) => {
    await assert.rejects(
      new SglangBackend({ url }).generate(request()),
      /aborted the generation: weights updating/,
    );
  });
});
