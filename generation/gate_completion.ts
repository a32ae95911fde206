/**
 * What a trainer is handed (a pending request) and how its completion is checked and turned into
 * the gate's {@link Completion}: routing rows decoded against the request's shape, the weight
 * versions of streamed chunks merged with the completion's own.
 *
 * @module
 */
import type {
  Completion,
  GenerationRequest,
  PromptBase,
  SamplingRequest,
  VersionRun,
} from "./backend.ts";
import { decodeTokenRows, type TokenRows, type TokenRowsWire } from "./token_rows.ts";
import { keptSetRows } from "./kept_sets.ts";
import { GateError } from "./gate_error.ts";

/** What `GET /api/requests/next` hands a trainer. */
export interface PendingRequest {
  request_id: string;
  rollout_id: string;
  turn_id: string;
  /** A view of the chain's ids (written to the trainer with `jsonWithIds` or as base64). */
  prompt_ids: Int32Array;
  sampling: SamplingRequest;
  /**
   * How many leading positions of `prompt_ids` already have `routed_experts` recorded on this
   * chain: a completion's rows start there (0 on a chain's first turn).
   */
  routed_experts_from: number;
  /**
   * The earlier turn of the chain whose prompt and output `prompt_ids` starts with (not written
   * in the full form: the trainer API hands it as the delta form's base).
   */
  prompt_base?: PromptBase;
}

/**
 * A trainer's completion: routing rows and kept sets as they came on the wire (kept sets as vLLM
 * sends them: one list of ids per output id), checked by the gate.
 */
export type GateCompletion = Omit<Completion, "routed_experts" | "sampling_mask"> & {
  routed_experts?: TokenRowsWire;
  sampling_mask?: number[][];
};

/** What a completion's `routed_experts` must fit: the request's prompt, where its rows start. */
export interface RowsExpected {
  promptLength: number;
  /** `routed_experts_from` of the request. */
  from: number;
  /** The chain's earlier rows (dtype and row shape), when it has some. */
  like?: GenerationRequest["routedExpertsLike"];
}

/**
 * The completion a trainer sent, checked against its request: `routed_experts` must have one row
 * per position `routed_experts_from … len(prompt_ids) + len(output_ids) − 2` and keep the
 * chain's row shape; a weight version that changed between appended chunks is kept per chunk;
 * the first id's version is the first appended chunk's, else `ackVersion` (what the trainer's
 * acknowledgement named or was stamped with). Throws a {@link GateError} and changes nothing when
 * the completion does not fit.
 */
export function trainerCompletion(
  request: PendingRequest,
  appended: number,
  versions: readonly VersionRun[],
  completion: GateCompletion,
  like?: GenerationRequest["routedExpertsLike"],
  ackVersion?: string | number,
): Completion {
  const { routed_experts: wire, sampling_mask: kept, ...rest } = completion;
  const resolved: Completion = rest;
  if (kept) {
    resolved.sampling_mask = completionKeptSets(
      kept,
      completion.output_ids,
      request.sampling.top_k ?? 0,
    );
  }
  const first = versions[0]?.[1] ?? ackVersion;
  if (first !== undefined) resolved.dispatch_version = first;
  if (wire) {
    const expected = {
      promptLength: request.prompt_ids.length,
      from: request.routed_experts_from,
      like,
    };
    resolved.routed_experts = completionRows(expected, wire, completion.output_ids.length);
  }
  return withVersionRuns(resolved, appended, versions);
}

/**
 * `completion` with the weight versions of its appended chunks (`versions`, each from where it
 * starts; `appended` ids were streamed) merged with its own `weight_version`.
 */
export function withVersionRuns(
  completion: Completion,
  appended: number,
  versions: readonly VersionRun[],
): Completion {
  const runs = [...versions];
  const last = completion.weight_version;
  if (last !== undefined && runs.at(-1)?.[1] !== last) runs.push([appended, last]);
  if (runs.length > 1) completion.weight_versions = runs;
  if (completion.weight_version === undefined && runs.length) {
    completion.weight_version = runs.at(-1)![1];
  }
  return completion;
}

/**
 * A completion's kept sets as rows at least `width` wide (the request's `top_k`), or a
 * {@link GateError} saying what is wrong with them.
 */
export function completionKeptSets(
  sets: number[][],
  output: number[],
  width: number,
): TokenRows {
  try {
    return keptSetRows(sets, output, width);
  } catch (e) {
    throw new GateError("invalid_sampling_mask", `invalid completion: ${(e as Error).message}`);
  }
}

/** A completion's `routed_experts` decoded, or a {@link GateError} saying what was expected. */
export function completionRows(
  expected: RowsExpected,
  wire: TokenRowsWire,
  outputLength: number,
): TokenRows {
  const { promptLength, from, like } = expected;
  const rows = Math.max(0, promptLength + outputLength - 1 - from);
  try {
    return decodeTokenRows("routed_experts", wire, rows, like);
  } catch (e) {
    throw new GateError(
      "invalid_routed_experts",
      `invalid completion: ${
        (e as Error).message
      } (routed_experts_from ${from}, ${promptLength} prompt ids, ${outputLength} output ids)`,
    );
  }
}
