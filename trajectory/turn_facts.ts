/**
 * What a turn's sampled ids were produced under, beyond the ids: the sampling facts (temperature,
 * top-p, top-k and whether logprobs are raw or processed), the weight version of each streamed
 * chunk when a weight update fell inside the turn, the version at completion, and where its token rows (`routed_experts`,
 * `sampling_mask`) lie. A few numbers per turn: the rows themselves live in the {@link TokenRowStore}.
 *
 * @module
 */
import type {
  Completion,
  LogprobsMode,
  RowDtype,
  SamplingRequest,
  TokenRowField,
  VersionRun,
} from "../generation/mod.ts";
import { TOKEN_ROW_FIELDS } from "../generation/mod.ts";

/** The sampling a turn's logprobs came from (`null`: the engine's default, not known here). */
export interface SamplingFacts {
  temperature: number | null;
  top_p: number | null;
  top_k: number | null;
  logprobs_mode: LogprobsMode | null;
}

/** Where a turn's rows of one field lie: positions `from … from + shape[0] − 1` of its sequence. */
export interface RowsMeta {
  from: number;
  dtype: RowDtype;
  shape: number[];
}

export interface TurnFacts {
  sampling: SamplingFacts;
  /** Only when the turn's chunks came from more than one weight version. */
  versions?: VersionRun[];
  /**
   * The weight version the completion reported (its last chunk's): the version at completion,
   * beside the turn's `weightVersion` (its first id's).
   */
  completionVersion?: string | number;
  rows?: Partial<Record<TokenRowField, RowsMeta>>;
}

/**
 * The facts of a turn the backend completed with `completion`: its routing rows start at
 * `rowsFrom`, its kept sets at its first sampled id (`promptLength`).
 */
export function turnFacts(
  completion: Completion,
  sampling: SamplingRequest,
  rowsFrom: number,
  promptLength: number,
): TurnFacts {
  const facts: TurnFacts = {
    sampling: {
      temperature: sampling.temperature ?? null,
      top_p: sampling.top_p ?? null,
      top_k: sampling.top_k ?? null,
      logprobs_mode: completion.logprobs_mode ?? null,
    },
  };
  if (completion.weight_versions) facts.versions = completion.weight_versions;
  if (completion.weight_version !== undefined) facts.completionVersion = completion.weight_version;
  const starts: Record<TokenRowField, number> = {
    routed_experts: rowsFrom,
    sampling_mask: promptLength,
  };
  for (const field of TOKEN_ROW_FIELDS) {
    const rows = completion[field];
    if (!rows) continue;
    facts.rows ??= {};
    facts.rows[field] = { from: starts[field], dtype: rows.dtype, shape: rows.shape };
  }
  return facts;
}
