/**
 * The contract between the gateway and whatever produces completions: the trainer through the
 * interception gate, an inference engine, or (later) an upstream API.
 *
 * @module
 */
import type { RowDtype, TokenRows } from "./token_rows.ts";

export interface SamplingRequest {
  max_tokens: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_token_ids: number[];
}

export interface GenerationRequest {
  requestId: string;
  rolloutId: string;
  turnId: string;
  /** The prompt: a view of the chain's ids, never to be changed or kept past the generation. */
  promptIds: Int32Array;
  sampling: SamplingRequest;
  /** Sticky key (the rollout id) so an engine router keeps a rollout's prefix cache warm. */
  routingKey?: string;
  /**
   * Called with sampled ids as they are generated, before the completion resolves (engines that
   * stream, or a trainer appending). The completion's `output_ids` start with everything passed
   * here.
   */
  onTokens?: (ids: number[]) => void;
  /** Aborted when nobody waits for the answer any more. */
  signal?: AbortSignal;
  /**
   * How many leading positions of the prompt already have token rows (`routed_experts`) recorded
   * on this chain: the call's rows are wanted from there on (0 on a chain's first turn).
   */
  routedExpertsFrom?: number;
  /** The dtype and row shape the chain's earlier rows have; a call's rows must keep them. */
  routedExpertsLike?: { dtype: RowDtype; shape: readonly number[] };
  /**
   * The earlier turn whose prompt and output this prompt starts with (its first `length` ids):
   * a producer that keeps that turn's ids needs only the rest.
   */
  promptBase?: PromptBase;
}

/** Where a prompt extends an earlier turn's: that turn, and how many leading ids are its own. */
export interface PromptBase {
  turnId: string;
  /** The earlier turn's prompt length plus its output length. */
  length: number;
}

export type FinishReason = "stop" | "length";

/** How the producer computed logprobs: before (`raw`) or after (`processed`) temperature etc. */
export type LogprobsMode = "raw" | "processed";

/** From `offset` (an index into the output) on, the ids came from weight version `version`. */
export type VersionRun = [offset: number, version: string | number];

export interface Completion {
  output_ids: number[];
  /** One per output id when the producer reports them. */
  logprobs?: number[];
  finish_reason: FinishReason;
  /** Policy / weight version that produced the tokens, when known (the last chunk's). */
  weight_version?: string | number;
  /**
   * The version in force when the first id was sampled, when the producer knows it apart from
   * `weight_versions`: an engine's first span, a trainer's first appended chunk, the version its
   * `ack` named or was stamped with.
   */
  dispatch_version?: string | number;
  /**
   * When the ids came from different versions (streamed chunks, an engine's spans): each version
   * from where it starts, the first at offset 0. The turn's version is the first run's.
   */
  weight_versions?: VersionRun[];
  logprobs_mode?: LogprobsMode;
  /** Routing of positions `routedExpertsFrom … prompt + output − 2`, when the producer sent it. */
  routed_experts?: TokenRows;
  /** Each output id's kept set (`[output, 1, K]`, `token_rows.ts`), when the producer sent it. */
  sampling_mask?: TokenRows;
}

export interface GenerationBackend {
  readonly name: string;
  generate(request: GenerationRequest): Promise<Completion>;
}

/** Why a generation failed. The gateway maps each kind to an HTTP status, once. */
export type GenerationErrorKind =
  /** An engine failed, refused the request or sent something unreadable. */
  | "engine_failed"
  /** An engine did not answer in time. */
  | "engine_timeout"
  /** The trainer failed the request (`POST /api/requests/:id/fail`). */
  | "trainer_failed"
  /** The rollout was deleted or finished while the request waited. */
  | "cancelled"
  /** Nobody waits for the answer any more (the client disconnected). */
  | "client_gone"
  /** The turn waited longer than the gateway's turn timeout. */
  | "turn_timeout";

/** A generation that failed for a reason the agent should see (trainer `fail`, engine error). */
export class GenerationError extends Error {
  override name = "GenerationError";
  constructor(
    readonly kind: GenerationErrorKind,
    message: string,
    /** With `trainer_failed`: the status the trainer asked the agent to get, if any. */
    readonly requestedStatus?: number,
  ) {
    super(message);
  }
}

/**
 * Why a generation's signal aborted: the {@link GenerationError} it was aborted with (the turn
 * timed out, its agent is gone), or `client_gone` with `message`.
 */
export function abortError(signal: AbortSignal, message: string): GenerationError {
  return signal.reason instanceof GenerationError
    ? signal.reason
    : new GenerationError("client_gone", message);
}
