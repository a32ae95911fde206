/**
 * The vLLM teacher's reading of `prompt_logprobs`, against a real answer of vLLM 0.32's CPU build
 * (`__fixtures__/vllm_prompt_logprobs.json`, recorded from the tiny Qwen3 of the engine tests):
 * each position's logprob of the id there, range after range; an answer that does not line up is
 * refused, naming the position.
 */
import assert from "node:assert/strict";
import { promptLogprobs } from "./vllm_teacher.ts";

const recorded = JSON.parse(
  Deno.readTextFileSync(new URL("./__fixtures__/vllm_prompt_logprobs.json", import.meta.url)),
);
const ids = Int32Array.from(recorded.request.prompt as number[]);
const rows = recorded.response.choices[0].prompt_logprobs;
const where = "vLLM teacher t at http://127.0.0.1:8001/v1/completions";

Deno.test("vLLM teacher: a real prompt_logprobs answer read at the positions asked for", () => {
  const got = promptLogprobs(recorded.response, ids, [[3, 5], [9, 10]], where);
  const want = [3, 4, 9].map((p) => rows[p][String(ids[p])].logprob);
  assert.deepEqual(Array.from(got), want);
  assert.ok(got.every((lp) => lp < 0));
});

Deno.test("vLLM teacher: an answer that does not line up with the ids is refused", () => {
  const shifted = Int32Array.from(ids);
  shifted[4] = 7;
  assert.throws(
    () => promptLogprobs(recorded.response, shifted, [[3, 5]], where),
    /gave no logprob for id 7 at position 4/,
  );
  assert.throws(
    () => promptLogprobs(recorded.response, ids.subarray(0, 5), [[1, 2]], where),
    /without one prompt_logprobs entry per id \(5\)/,
  );
  const positive = structuredClone(recorded.response);
  positive.choices[0].prompt_logprobs[2][String(ids[2])].logprob = 0.5;
  assert.throws(() => promptLogprobs(positive, ids, [[2, 3]], where), /at position 2/);
});
