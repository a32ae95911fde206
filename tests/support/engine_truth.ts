/**
 * The engine's truth about a sample: every trained position's logprob recomputed by the same
 * weights (a real vLLM's `prompt_logprobs` over the sample's `input_ids`, `max_tokens: 1`) and
 * compared with what the sample recorded. A re-tokenized or shifted id shows up as nats, not as a
 * rounding difference.
 *
 * @module
 */
import assert from "node:assert/strict";

/**
 * `logprob[i]` of `ids[i]` given `ids[0..i)` under the server's weights (`NaN` at 0, which has
 * no context). vLLM answers `prompt_logprobs: 0` with one entry per prompt position: `null` first,
 * then `{ "<id>": { logprob, rank, decoded_token } }` holding the prompt's own id.
 */
export async function recomputeLogprobs(
  url: string,
  model: string,
  ids: ArrayLike<number>,
): Promise<Float64Array> {
  return (await recompute(url, model, ids)).logprobs;
}

/** {@link recomputeLogprobs}, with each id's rank among the engine's choices (1: the argmax). */
async function recompute(
  url: string,
  model: string,
  ids: ArrayLike<number>,
): Promise<{ logprobs: Float64Array; ranks: Float64Array }> {
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model,
      prompt: Array.from(ids),
      max_tokens: 1,
      temperature: 0,
      prompt_logprobs: 0,
    }),
    signal: AbortSignal.timeout(300_000),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `recompute answered ${res.status}: ${text.slice(0, 500)}`);
  const rows = JSON.parse(text).choices?.[0]?.prompt_logprobs as
    | (Record<string, { logprob: number; rank: number }> | null)[]
    | undefined;
  assert.ok(Array.isArray(rows) && rows.length === ids.length, "one prompt logprob per position");
  const logprobs = new Float64Array(ids.length).fill(NaN);
  const ranks = new Float64Array(ids.length).fill(NaN);
  for (let i = 1; i < ids.length; i++) {
    const hit = rows[i]?.[String(ids[i])];
    assert.ok(hit, `no recomputed logprob for id ${ids[i]} at position ${i}`);
    logprobs[i] = hit.logprob;
    ranks[i] = hit.rank;
  }
  return { logprobs, ranks };
}

/** What {@link checkEngineTruth} found over one sample. */
export interface EngineTruth {
  /** Positions with `loss_mask` 1. */
  trained: number;
  /** Largest |recorded − recomputed| over them. */
  maxAbsDiff: number;
}

/**
 * Asserts that every trained position of `sample` carries a recorded logprob within `tolerance`
 * of the engine's recompute; returns how many were checked and the largest difference. With
 * `greedy` (the sample was generated at temperature 0) each trained id must also be the engine's
 * own argmax there: the engine, not a script, chose it.
 */
export async function checkEngineTruth(
  url: string,
  model: string,
  sample: {
    input_ids: ArrayLike<number>;
    loss_mask: ArrayLike<number>;
    logprobs: ArrayLike<number | null>;
  },
  tolerance = 1e-3,
  { greedy = false }: { greedy?: boolean } = {},
): Promise<EngineTruth> {
  const { logprobs: truth, ranks } = await recompute(url, model, sample.input_ids);
  let trained = 0, maxAbsDiff = 0;
  for (let i = 0; i < sample.input_ids.length; i++) {
    if (sample.loss_mask[i] !== 1) continue;
    trained++;
    const recorded = sample.logprobs[i];
    assert.ok(
      typeof recorded === "number" && Number.isFinite(recorded),
      `trained position ${i} (id ${sample.input_ids[i]}) has no recorded logprob`,
    );
    const diff = Math.abs(recorded - truth[i]);
    maxAbsDiff = Math.max(maxAbsDiff, diff);
    assert.ok(
      diff <= tolerance,
      `position ${i} (id ${sample.input_ids[i]}): recorded ${recorded}, engine ${truth[i]}`,
    );
    if (greedy) {
      assert.equal(ranks[i], 1, `position ${i}: id ${sample.input_ids[i]} is not the argmax`);
    }
  }
  assert.ok(trained > 0, "the sample trains no position");
  return { trained, maxAbsDiff };
}
