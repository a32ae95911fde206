/**
 * A vLLM answer ({@link VllmChoice}, from either endpoint, streamed or not) checked against its
 * request and turned into a {@link Completion}: anything that does not line up with the sampled
 * ids is an `engine_failed` error naming vLLM, never a plausible value.
 *
 * - logprobs: one per id (`/inference/v1/generate` names each entry's id: it must be the sampled
 *   one); vLLM's `-9999.0` stands for "no logprob" (a NaN or missing entry), so a turn with one
 *   has none.
 * - `weight_versions` spans `[{version, start, end}]` must tile the output: they become the
 *   completion's version runs, so a turn that straddles a weight update keeps each version; the
 *   first span's is the first id's (`dispatch_version`).
 * - `routed_experts`: a base64 `.npy` of shape `(T, layers, top_k)`, `T` = the request's
 *   positions `routedExpertsFrom … prompt + output − 2` (the request's
 *   `routed_experts_prompt_start`), aligned as SGLang's rows are.
 * - `sampling_mask`: one list of kept ids per output id, holding that id; kept as int32 rows
 *   `[T, 1, K]` padded with −1 (K: the request's `top_k`, or the largest set).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import {
  type Completion,
  GenerationError,
  type GenerationRequest,
  type LogprobsMode,
  type VersionRun,
} from "./backend.ts";
import { finishReason, weightVersionOf } from "./engine_http.ts";
import { decodeNpy } from "./npy.ts";
import { ROW_DTYPES, type TokenRows } from "./token_rows.ts";
import { keptSetRows } from "./kept_sets.ts";
import type { VllmChoice } from "./vllm_wire.ts";

/** vLLM's stand-in for a logprob it does not have (`_clamp_logprob`, a missing top-k entry). */
const NO_LOGPROB = -9999;

function fail(message: string): never {
  throw new GenerationError("engine_failed", message);
}

/** The completion `choice` stands for; `version` is a version the deployment sent otherwise. */
export function vllmCompletion(
  choice: VllmChoice,
  req: GenerationRequest,
  where: string,
  o: { version?: unknown; logprobsMode: LogprobsMode },
): Completion {
  const ids = choice.token_ids;
  if (!Array.isArray(ids) || !ids.every((t) => Number.isInteger(t) && t >= 0)) {
    fail(
      `${where} answered without choices[0].token_ids (vLLM ≥ 0.10.2 returns them for return_token_ids)`,
    );
  }
  const completion: Completion = {
    output_ids: ids,
    finish_reason: finishReason(choice.finish_reason, ids, req, where),
    logprobs_mode: o.logprobsMode,
  };
  const logprobs = logprobsOf(choice, ids, where);
  if (logprobs) completion.logprobs = logprobs;
  const runs = versionRuns(choice.weight_versions, ids.length, where);
  if (runs.length > 1) completion.weight_versions = runs;
  // The engine stamped each id when it was sampled: the first span is the first id's version.
  if (runs.length > 0) completion.dispatch_version = runs[0][1];
  const version = runs.at(-1)?.[1] ?? weightVersionOf(o.version ?? choice.weight_version);
  if (version !== undefined) completion.weight_version = version;
  if (choice.routed_experts != null) {
    completion.routed_experts = routedExperts(choice.routed_experts, req, ids.length, where);
  }
  if (choice.sampling_mask != null) {
    completion.sampling_mask = keptSets(choice.sampling_mask, ids, req, where);
  }
  return completion;
}

function logprobsOf(choice: VllmChoice, ids: number[], where: string): number[] | undefined {
  const lps = choice.logprobs;
  if (!lps) return undefined;
  if (lps.length !== ids.length || !lps.every((x) => typeof x === "number" && x <= 0)) {
    fail(`${where} sent ${lps.length} logprobs (at most 0 each) for ${ids.length} token ids`);
  }
  const named = choice.logprob_ids;
  if (named && named.some((id, i) => id !== ids[i])) {
    fail(`${where} sent logprobs.content whose token_id do not match token_ids`);
  }
  return (lps as number[]).includes(NO_LOGPROB) ? undefined : lps as number[];
}

/** `[{version, start, end}]` spans over the output as version runs; [] when none were sent. */
function versionRuns(spans: unknown, outputs: number, where: string): VersionRun[] {
  if (spans == null || (Array.isArray(spans) && spans.length === 0)) return [];
  const bad = () =>
    fail(
      `${where} sent weight_versions that do not tile its ${outputs} output ids: ${
        JSON.stringify(spans).slice(0, 300)
      }`,
    );
  if (!Array.isArray(spans)) bad();
  const runs: VersionRun[] = [];
  let at = 0;
  for (const s of spans as { version?: unknown; start?: unknown; end?: unknown }[]) {
    const version = weightVersionOf(s?.version);
    if (version === undefined || s.start !== at || !Number.isInteger(s.end)) bad();
    if ((s.end as number) <= at) bad();
    if (runs.at(-1)?.[1] !== version) runs.push([at, version!]);
    at = s.end as number;
  }
  if (at !== outputs) bad();
  return runs;
}

function routedExperts(
  data: unknown,
  req: GenerationRequest,
  outputs: number,
  where: string,
): TokenRows {
  const from = req.routedExpertsFrom ?? 0;
  const rows = Math.max(0, req.promptIds.length + outputs - 1 - from);
  if (typeof data !== "string") fail(`${where} sent routed_experts that is not base64 .npy text`);
  let decoded: TokenRows;
  try {
    decoded = decodeNpy(new Uint8Array(Buffer.from(data, "base64")));
  } catch (e) {
    fail(`${where} sent routed_experts that is not a .npy array: ${(e as Error).message}`);
  }
  const { shape } = decoded;
  if (
    shape.length !== 3 || shape[0] !== rows || shape[1] < 1 || shape[2] < 1 ||
    !ROW_DTYPES.includes(decoded.dtype)
  ) {
    fail(
      `${where} sent routed_experts of shape (${
        shape.join(", ")
      }); expected (${rows}, layers, top_k): positions ${from} … ${
        from + rows - 1
      } (routed_experts_prompt_start ${from}, ${req.promptIds.length} prompt ids, ${outputs} output ids)`,
    );
  }
  return decoded;
}

function keptSets(
  sets: unknown,
  ids: number[],
  req: GenerationRequest,
  where: string,
): TokenRows {
  try {
    return keptSetRows(sets, ids, req.sampling.top_k ?? 0);
  } catch (e) {
    fail(`${where} sent a sampling_mask that does not fit its output: ${(e as Error).message}`);
  }
}
