/**
 * A vLLM server as the generation backend, the prompt sent as token ids to one of its two
 * token-in endpoints (`vllm_wire.ts`): vLLM's RL API `POST /inference/v1/generate` when the
 * server offers it (`--enable-scale-out`: per-token weight-version spans, kept-token masks), else
 * the OpenAI-compatible `POST /v1/completions`. Which one is probed once (an empty body: 404
 * where the route is missing, 400 where it is) and kept; `api` forces either.
 *
 * Request facts this relies on (vLLM 0.32 `CompletionRequest`, `GenerateRequest` and
 * `SamplingParams`):
 * - completions: `prompt` as `list[int]` (used as is), `return_token_ids: true` (vLLM ≥ 0.10.2),
 *   `logprobs: 0` (the sampled token's only), `stop_token_ids`, `skip_special_tokens: false`,
 *   `include_stop_str_in_output: true`, `routed_experts_prompt_start`;
 * - generate: `token_ids`, `request_id`, and `sampling_params` with the same sampling fields,
 *   `routed_experts_prompt_start` and `detokenize: false` (the ids are what counts);
 * - `finish_reason` is `"stop"` / `"length"` (vLLM also reports `"abort"` and `"error"`);
 * - a request whose HTTP connection closes is aborted by vLLM (`with_cancellation`), so a client
 *   that leaves stops the generation.
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
import { vllmCompletion } from "./vllm_answer.ts";
import { VLLM_PATHS, type VllmApi, type VllmChoice, vllmChoice } from "./vllm_wire.ts";
import { EngineHttp, type EngineHttpOptions, offersRoute, routingHeaders } from "./engine_http.ts";

export interface VllmOptions extends EngineHttpOptions {
  /** Backend name rollouts choose it by (default `vllm`). */
  name?: string;
  /** The `model` field (vLLM's served model name); omitted when unset. */
  model?: string;
  /**
   * Which endpoint: `auto` (default) probes for `/inference/v1/generate` once and uses it when
   * it is there, else `/v1/completions`; `generate` or `completions` use that one, unprobed.
   */
  api?: VllmApi | "auto";
  /** Header carrying the routing key (the rollout id); default `X-Session-ID`; `""` = none. */
  routingHeader?: string;
  /** Response header read as the weight version, when present (default `x-weight-version`). */
  weightVersionHeader?: string;
  /**
   * Ask vLLM to stream (`stream: true`, both endpoints stream) and pass the sampled ids on as
   * they arrive, so agents see the answer while it is generated. The recorded turn is the same
   * either way (`/v1/completions` streams no routing).
   */
  stream?: boolean;
  /**
   * How the server computes logprobs (`--logprobs-mode`: `raw_logprobs`, vLLM's default, is
   * `raw`; `processed_logprobs` is `processed`); recorded with every turn. Default `raw`.
   */
  logprobsMode?: LogprobsMode;
}

export class VllmBackend implements GenerationBackend {
  readonly name: string;
  readonly http: EngineHttp;
  /** The endpoint in use, once known (probed at the first generation). */
  #api?: Promise<VllmApi>;

  constructor(readonly options: VllmOptions) {
    this.name = options.name ?? "vllm";
    this.http = new EngineHttp("vLLM", options);
    const forced = options.api ?? "auto";
    if (forced !== "auto") this.#api = Promise.resolve(forced);
  }

  /** The endpoint generations go to: forced, or probed once (a failed probe is tried again). */
  api(signal?: AbortSignal): Promise<VllmApi> {
    this.#api ??= offersRoute(this.http, VLLM_PATHS.generate, signal).then(
      (offered) => offered ? "generate" : "completions",
      (e) => {
        this.#api = undefined;
        throw e;
      },
    );
    return this.#api;
  }

  async generate(req: GenerationRequest): Promise<Completion> {
    const api = await this.api(req.signal);
    const path = VLLM_PATHS[api];
    const where = `vLLM at ${this.http.url}${path}`;
    const stream = this.options.stream === true;
    const res = await this.http.postJson(path, {
      signal: req.signal,
      headers: routingHeaders(this.options.routingHeader, req.routingKey),
      body: (a) => this.#body(api, req, a.index),
      read: stream ? (r) => readVllmStream(r, api, where, req.onTokens) : undefined,
    });
    const choice = stream ? res.json as VllmChoice : vllmChoice(api, res.json);
    if (!choice) throw new GenerationError("engine_failed", `${where} answered without choices`);
    return vllmCompletion(choice, req, where, {
      version: res.headers.get(this.options.weightVersionHeader ?? "x-weight-version") ??
        (res.json as { weight_version?: unknown } | null)?.weight_version,
      logprobsMode: this.options.logprobsMode ?? "raw",
    });
  }

  #body(api: VllmApi, req: GenerationRequest, attempt: number): Record<string, unknown> {
    const s = req.sampling;
    const sampling: Record<string, unknown> = {
      max_tokens: s.max_tokens,
      stop_token_ids: s.stop_token_ids,
      logprobs: 0,
      skip_special_tokens: false,
      include_stop_str_in_output: true,
      routed_experts_prompt_start: req.routedExpertsFrom ?? 0,
    };
    if (s.temperature !== undefined) sampling.temperature = s.temperature;
    if (s.top_p !== undefined) sampling.top_p = s.top_p;
    if (s.top_k !== undefined) sampling.top_k = s.top_k;
    const model = this.options.model ? { model: this.options.model } : {};
    const stream = this.options.stream === true;
    if (api === "completions") {
      return { prompt: req.promptIds, ...sampling, return_token_ids: true, stream, ...model };
    }
    return {
      token_ids: req.promptIds,
      // A retry gets its own id: the abandoned attempt's may still be known to the engine.
      request_id: attempt === 0 ? req.requestId : `${req.requestId}-retry${attempt}`,
      sampling_params: { ...sampling, detokenize: false },
      stream,
      ...model,
    };
  }
}
