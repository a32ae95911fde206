/**
 * vLLM answers into completions: the whole answers a real vLLM 0.32 sent (recorded in
 * `__fixtures__/`), then everything that must line up with the sampled ids (logprobs, version
 * spans, routing `.npy`, kept sets), each broken in turn: an `engine_failed` error naming vLLM.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import type { GenerationRequest } from "./backend.ts";
import { encodeNpy } from "./npy.ts";
import { vllmCompletion } from "./vllm_answer.ts";
import { type VllmChoice, vllmChoice } from "./vllm_wire.ts";

const fixture = (name: string) =>
  JSON.parse(Deno.readTextFileSync(new URL(`./__fixtures__/${name}`, import.meta.url)));

const PROMPT = Int32Array.of(151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198);

function request(o: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    requestId: "req_1",
    rolloutId: "r",
    turnId: "r.0",
    promptIds: PROMPT,
    sampling: { max_tokens: 4, stop_token_ids: [151645] },
    ...o,
  };
}

const MODE = { logprobsMode: "raw" as const };
const where = "vLLM at http://127.0.0.1:8000/inference/v1/generate";

Deno.test("vLLM answers: both endpoints' recorded answers give the same completion", () => {
  const fromCompletions = vllmCompletion(
    vllmChoice("completions", fixture("vllm_completions.json"))!,
    request(),
    where,
    MODE,
  );
  const fromGenerate = vllmCompletion(
    vllmChoice("generate", fixture("vllm_generate.json"))!,
    request(),
    where,
    MODE,
  );
  assert.deepEqual(fromCompletions.output_ids, [103095, 8763, 134855, 39741]);
  assert.deepEqual(fromGenerate.output_ids, fromCompletions.output_ids);
  assert.deepEqual(fromGenerate.logprobs, fromCompletions.logprobs);
  assert.equal(fromGenerate.finish_reason, "length");
  assert.equal(fromGenerate.weight_version, "v2", "the one span's version");
  assert.equal(fromGenerate.weight_versions, undefined, "one version: no runs");
  assert.equal(fromCompletions.weight_version, undefined, "completions name no version");
  assert.equal(fromGenerate.routed_experts, undefined, "routed_experts: null (a dense model)");
  assert.equal(fromGenerate.sampling_mask, undefined, "sampling_mask: null (not enabled)");
});

Deno.test("vLLM answers: an answer without logprobs leaves them absent", () => {
  const c = vllmCompletion(
    vllmChoice("completions", fixture("vllm_completions_no_logprobs.json"))!,
    request(),
    where,
    MODE,
  );
  assert.equal(c.output_ids.length, 3);
  assert.equal(c.logprobs, undefined);
  // vLLM's -9999.0 stands for a logprob it does not have: the turn has none, not that value.
  const sentinel = choice({ logprobs: [-0.5, -9999, -1] });
  assert.equal(vllmCompletion(sentinel, request(), where, MODE).logprobs, undefined);
});

function choice(o: Partial<VllmChoice> = {}): VllmChoice {
  return { token_ids: [11, 12, 13], logprobs: [-0.5, -0.25, -1], finish_reason: "length", ...o };
}

Deno.test("vLLM answers: weight-version spans become the turn's runs; the first id's version leads", () => {
  const c = vllmCompletion(
    choice({
      weight_versions: [
        { version: "v-1", start: 0, end: 2 },
        { version: "v-2", start: 2, end: 3 },
      ],
    }),
    request(),
    where,
    MODE,
  );
  assert.deepEqual(c.weight_versions, [[0, "v-1"], [2, "v-2"]]);
  assert.equal(c.weight_version, "v-2", "the completion's own version is its last chunk's");
  const merged = vllmCompletion(
    choice({
      weight_versions: [{ version: 3, start: 0, end: 1 }, { version: 3, start: 1, end: 3 }],
    }),
    request(),
    where,
    MODE,
  );
  assert.equal(merged.weight_versions, undefined, "adjacent spans of one version are one run");
  assert.equal(merged.weight_version, 3);
});

Deno.test("vLLM answers: routing .npy rows cover routed_experts_prompt_start … prompt + output − 2", () => {
  const from = 4;
  const rows = PROMPT.length + 3 - 1 - from;
  const values = Uint16Array.from({ length: rows * 2 * 2 }, (_, i) => 300 + i);
  const npy = (shape: number[], v: Uint8Array = new Uint8Array(values.buffer)) =>
    Buffer.from(encodeNpy("uint16", shape, v)).toString("base64");
  const c = vllmCompletion(
    choice({ routed_experts: npy([rows, 2, 2]) }),
    request({ routedExpertsFrom: from }),
    where,
    MODE,
  );
  assert.deepEqual([c.routed_experts!.dtype, c.routed_experts!.shape], ["uint16", [rows, 2, 2]]);
  assert.deepEqual(c.routed_experts!.bytes, new Uint8Array(values.buffer));
  const bad: [unknown, RegExp][] = [
    [
      npy([rows + 1, 2, 2], new Uint8Array((rows + 1) * 8)),
      /routed_experts of shape \(8, 2, 2\); expected \(7, layers, top_k\): positions 4 … 10/,
    ],
    [npy([rows * 4], new Uint8Array(values.buffer)), /shape \(28\)/],
    [
      Buffer.from("not numpy").toString("base64"),
      /vLLM at .* sent routed_experts that is not a \.npy array: .*magic/,
    ],
    [42, /not base64 \.npy text/],
  ];
  for (const [routed_experts, message] of bad) {
    assert.throws(
      () =>
        vllmCompletion(
          choice({ routed_experts }),
          request({ routedExpertsFrom: from }),
          where,
          MODE,
        ),
      (e: Error) =>
        e.name === "GenerationError" && (e as { kind?: string }).kind === "engine_failed" &&
        message.test(e.message),
      String(message),
    );
  }
});

Deno.test("vLLM answers: kept sets become int32 rows padded to top_k, holding the sampled id", () => {
  const c = vllmCompletion(
    choice({ sampling_mask: [[11, 40], [12], [13, 7, 9]] }),
    request({ sampling: { max_tokens: 4, stop_token_ids: [0], top_k: 4 } }),
    where,
    MODE,
  );
  const rows = c.sampling_mask!;
  assert.deepEqual([rows.dtype, rows.shape], ["int32", [3, 1, 4]]);
  assert.deepEqual(
    Array.from(new Int32Array(rows.bytes.buffer, rows.bytes.byteOffset, 12)),
    [11, 40, -1, -1, 12, -1, -1, -1, 13, 7, 9, -1],
  );
  for (const sampling_mask of [[[11], [99], [13]], [[11], [12]], "x"]) {
    assert.throws(
      () => vllmCompletion(choice({ sampling_mask }), request(), where, MODE),
      /vLLM at .* sent a sampling_mask that does not fit its output: sampling_mask/,
    );
  }
});

Deno.test("vLLM answers: logprobs or spans that do not line up with the ids are refused", () => {
  const bad: [Partial<VllmChoice>, RegExp][] = [
    [{ logprobs: [-1, -1] }, /sent 2 logprobs \(at most 0 each\) for 3 token ids/],
    [{ logprobs: [-1, 0.5, -1] }, /at most 0 each/],
    [{ logprob_ids: [11, 99, 13] }, /token_id do not match token_ids/],
    [{ weight_versions: [{ version: "a", start: 0, end: 2 }] }, /do not tile its 3 output ids/],
    [{ weight_versions: [{ version: "a", start: 1, end: 3 }] }, /do not tile/],
    [{ weight_versions: [{ start: 0, end: 3 }] }, /do not tile/],
    [{ token_ids: [1, -2] }, /without choices\[0\]\.token_ids/],
    [{ finish_reason: "abort" }, /finish_reason "abort"/],
  ];
  for (const [o, message] of bad) {
    assert.throws(() => vllmCompletion(choice(o), request(), where, MODE), message);
  }
});
