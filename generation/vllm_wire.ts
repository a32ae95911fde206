/**
 * vLLM's two token-in endpoints on the wire, read into one shape ({@link VllmChoice}) so one
 * validation path checks both, streamed or not (vLLM 0.32,
 * `vllm/entrypoints/openai/completion/protocol.py` and
 * `vllm/entrypoints/scale_out/token_in_token_out/protocol.py`):
 *
 * - `POST /v1/completions`: `choices[0].token_ids` (with `return_token_ids`), the sampled ids'
 *   logprobs in `choices[0].logprobs.token_logprobs` (`logprobs: 0`), `routed_experts` (not
 *   streamed); no weight versions (a deployment may add a header or a `weight_version` field).
 * - `POST /inference/v1/generate` (`--enable-scale-out`): `choices[0].token_ids`, logprobs as
 *   `choices[0].logprobs.content[]` of `{token_id, logprob}`, `routed_experts`,
 *   `sampling_mask` (a list of kept ids per output id, server flag `--return-sampling-mask`),
 *   and `weight_versions`: `[{version, start, end}]` spans over output indexes (on the last
 *   chunk when streamed, covering the whole output).
 *
 * Streamed (`stream: true`, server-sent `data:` chunks, `[DONE]` last), each chunk carries the
 * ids sampled since the previous one with their logprobs and kept sets.
 *
 * @module
 */
import { GenerationError } from "./backend.ts";

export type VllmApi = "generate" | "completions";

export const VLLM_PATHS: Readonly<Record<VllmApi, string>> = {
  generate: "/inference/v1/generate",
  completions: "/v1/completions",
};

/** One answer's first choice (or a stream's chunks merged), as either endpoint sent it. */
export interface VllmChoice {
  token_ids: unknown;
  /** The sampled ids' logprobs; null when none came (for some chunk with ids, when streamed). */
  logprobs: unknown[] | null;
  /** `/inference/v1/generate`: the id each logprob entry is for (must be `token_ids`). */
  logprob_ids?: unknown[];
  finish_reason: unknown;
  routed_experts?: unknown;
  /** The kept ids of each output id; null when a streamed chunk with ids had none. */
  sampling_mask?: unknown;
  weight_versions?: unknown;
  /** A deployment's own version field (`/v1/completions`), on the answer or its choice. */
  weight_version?: unknown;
}

interface WireChoice {
  token_ids?: unknown;
  logprobs?: { token_logprobs?: unknown; content?: unknown } | null;
  finish_reason?: unknown;
  routed_experts?: unknown;
  sampling_mask?: unknown;
  weight_versions?: unknown;
  weight_version?: unknown;
}

/** The first choice of an answer or chunk in the common shape; undefined when it has none. */
export function vllmChoice(api: VllmApi, json: unknown): VllmChoice | undefined {
  const top = (json ?? {}) as { choices?: unknown; weight_version?: unknown };
  const c = (Array.isArray(top.choices) ? top.choices[0] : undefined) as WireChoice | undefined;
  if (!c || typeof c !== "object") return undefined;
  const choice: VllmChoice = {
    token_ids: c.token_ids,
    logprobs: null,
    finish_reason: c.finish_reason,
    routed_experts: c.routed_experts,
    sampling_mask: c.sampling_mask,
    weight_versions: c.weight_versions,
    weight_version: top.weight_version ?? c.weight_version,
  };
  const lp = c.logprobs;
  if (api === "completions" && Array.isArray(lp?.token_logprobs)) {
    choice.logprobs = lp.token_logprobs;
  } else if (api === "generate" && Array.isArray(lp?.content)) {
    const content = lp.content as ({ token_id?: unknown; logprob?: unknown } | null)[];
    choice.logprobs = content.map((e) => e?.logprob);
    choice.logprob_ids = content.map((e) => e?.token_id);
  }
  return choice;
}

function isIds(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((t) => Number.isInteger(t) && t >= 0);
}

/** Adds a streamed chunk's choice to what came before; its ids go to `onTokens`. */
export function mergeChunk(
  into: VllmChoice,
  chunk: VllmChoice,
  where: string,
  onTokens?: (ids: number[]) => void,
): void {
  const delta = chunk.token_ids ?? [];
  if (!isIds(delta)) {
    throw new GenerationError(
      "engine_failed",
      `${where} streamed a chunk without choices[0].token_ids (vLLM ≥ 0.10.2 sends them with return_token_ids)`,
    );
  }
  const ids = into.token_ids as number[];
  if (delta.length > 0) {
    // A chunk with ids and without their logprobs (or kept sets) leaves the whole turn without.
    const lps = chunk.logprobs;
    if (into.logprobs && lps?.length === delta.length) {
      into.logprobs.push(...lps);
      into.logprob_ids?.push(...(chunk.logprob_ids ?? lps.map(() => undefined)));
    } else into.logprobs = null;
    const mask = chunk.sampling_mask;
    if (ids.length === 0 && Array.isArray(mask)) into.sampling_mask = [...mask];
    else if (Array.isArray(into.sampling_mask) && Array.isArray(mask)) {
      into.sampling_mask.push(...mask);
    } else into.sampling_mask = null;
  }
  ids.push(...delta);
  if (delta.length > 0) onTokens?.(delta);
  into.finish_reason = chunk.finish_reason ?? into.finish_reason;
  into.routed_experts = chunk.routed_experts ?? into.routed_experts;
  into.weight_versions = chunk.weight_versions ?? into.weight_versions;
  into.weight_version ??= chunk.weight_version;
}

/** What a stream starts from: no ids yet, logprobs to be added. */
export function emptyChoice(api: VllmApi): VllmChoice {
  return {
    token_ids: [],
    logprobs: [],
    ...(api === "generate" ? { logprob_ids: [] } : {}),
    finish_reason: null,
  };
}
