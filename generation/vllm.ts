/**
 * A vLLM OpenAI-compatible server as the generation backend: `POST /v1/completions` with the
 * prompt as token ids, answered with the sampled ids and their logprobs.
 *
 * Wire facts this relies on (vLLM `vllm/entrypoints/openai/completion/protocol.py`,
 * `CompletionRequest` / `CompletionResponseChoice`):
 * - `prompt` accepts `list[int]` (token ids, used as is);
 * - `return_token_ids: true` adds `choices[i].token_ids` (the generated ids) and
 *   `choices[i].prompt_token_ids`; added by vllm-project/vllm#22587, released in vLLM 0.10.2;
 * - `logprobs: 0` returns only the sampled token's logprob, in `choices[i].logprobs.token_logprobs`
 *   (vLLM `SamplingMetadata.max_num_logprobs`: "0 means sampled token logprobs only");
 * - `stop_token_ids`, `skip_special_tokens`, `include_stop_str_in_output` are vLLM sampling extras;
 * - `finish_reason` is `"stop"` / `"length"` (vLLM also reports `"abort"` and `"error"`).
 *
 * Sticky routing: the rollout id goes in a header (`X-Session-ID` by default), which session-aware
 * routers in front of several vLLM replicas (e.g. the vLLM production-stack router's `session`
 * routing) hash on, so a rollout's turns land where its prefix is cached. A plain vLLM server
 * ignores it.
 *
 * @module
 */
import {
  type Completion,
  type GenerationBackend,
  GenerationError,
  type GenerationRequest,
  type LogprobsMode,
} from "./backend.ts";
import { readVllmStream } from "./vllm_stream.ts";
import {
  EngineHttp,
  type EngineHttpOptions,
  finishReason,
  routingHeaders,
  weightVersionOf,
} from "./engine_http.ts";

export interface VllmOptions extends EngineHttpOptions {
  /** Backend name rollouts choose it by (default `vllm`). */
  name?: string;
  /** The `model` field (vLLM's served model name); omitted when unset. */
  model?: string;
  /** Header carrying the routing key (the rollout id); default `X-Session-ID`; `""` = none. */
  routingHeader?: string;
  /** Response header read as the weight version, when present (default `x-weight-version`). */
  weightVersionHeader?: string;
  /**
   * Ask vLLM to stream (`stream: true`) and pass the sampled ids on as they arrive, so agents see
   * the answer while it is generated. The recorded turn is the same either way.
   */
  stream?: boolean;
  /**
   * How the server computes logprobs (`--logprobs-mode`: `raw_logprobs`, vLLM's default, is
   * `raw`; `processed_logprobs` is `processed`); recorded with every turn. Default `raw`.
   */
  logprobsMode?: LogprobsMode;
}

interface VllmChoice {
  token_ids?: unknown;
  logprobs?: { token_logprobs?: unknown } | null;
  finish_reason?: unknown;
  weight_version?: unknown;
}

export class VllmBackend implements GenerationBackend {
  readonly name: string;
  readonly http: EngineHttp;

  constructor(readonly options: VllmOptions) {
    this.name = options.name ?? "vllm";
    this.http = new EngineHttp("vLLM", options);
  }

  async generate(req: GenerationRequest): Promise<Completion> {
    const headers = routingHeaders(this.options.routingHeader, req.routingKey);
    const body: Record<string, unknown> = {
      prompt: req.promptIds,
      max_tokens: req.sampling.max_tokens,
      stop_token_ids: req.sampling.stop_token_ids,
      logprobs: 0,
      return_token_ids: true,
      skip_special_tokens: false,
      include_stop_str_in_output: true,
      stream: this.options.stream === true,
    };
    if (this.options.model) body.model = this.options.model;
    if (req.sampling.temperature !== undefined) body.temperature = req.sampling.temperature;
    if (req.sampling.top_p !== undefined) body.top_p = req.sampling.top_p;

    const where = `vLLM at ${this.http.url}/v1/completions`;
    const res = await this.http.postJson("/v1/completions", {
      signal: req.signal,
      headers,
      body: () => body,
      read: this.options.stream ? (r) => readVllmStream(r, where, req.onTokens) : undefined,
    });
    return this.#completion(res.json, res.headers, req);
  }

  #completion(json: unknown, headers: Headers, req: GenerationRequest): Completion {
    const where = `vLLM at ${this.http.url}/v1/completions`;
    const top = (json ?? {}) as { choices?: unknown; weight_version?: unknown };
    const choice = (Array.isArray(top.choices) ? top.choices[0] : undefined) as
      | VllmChoice
      | undefined;
    if (!choice) throw new GenerationError("engine_failed", `${where} answered without choices`);
    const ids = choice.token_ids;
    if (!Array.isArray(ids) || !ids.every((t) => Number.isInteger(t) && t >= 0)) {
      throw new GenerationError(
        "engine_failed",
        `${where} answered without choices[0].token_ids (vLLM ≥ 0.10.2 returns them for return_token_ids)`,
      );
    }
    const lps = choice.logprobs?.token_logprobs;
    let logprobs: number[] | undefined;
    if (Array.isArray(lps)) {
      if (lps.length !== ids.length || !lps.every((x) => typeof x === "number")) {
        throw new GenerationError(
          "engine_failed",
          `${where} sent ${lps.length} logprobs for ${ids.length} token ids`,
        );
      }
      logprobs = lps as number[];
    }
    const completion: Completion = {
      output_ids: ids as number[],
      logprobs,
      finish_reason: finishReason(choice.finish_reason, ids as number[], req, where),
    };
    const version = weightVersionOf(
      headers.get(this.options.weightVersionHeader ?? "x-weight-version") ??
        top.weight_version ?? choice.weight_version,
    );
    if (version !== undefined) completion.weight_version = version;
    // vLLM's completions API returns no MoE routing: turns through it carry none.
    completion.logprobs_mode = this.options.logprobsMode ?? "raw";
    return completion;
  }
}
