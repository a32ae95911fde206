/**
 * An SGLang server as the generation backend: the native `POST /generate` with `input_ids`.
 *
 * Wire facts this relies on (SGLang `docs/basic_usage/sampling_params.md`, `GenerateReqInput` in
 * `python/sglang/srt/managers/io_struct.py`, `python/sglang/srt/entrypoints/http_server.py`,
 * `tokenizer_manager.py`):
 * - request: `input_ids: List[int]`, `rid` (request id), `return_logprob: true`, and
 *   `sampling_params` with `max_new_tokens`, `temperature`, `top_p`, `stop_token_ids`,
 *   `skip_special_tokens`, `no_stop_trim` ("don't trim stop words or EOS token");
 * - non-streaming answer: `{text, output_ids, meta_info}`; `meta_info.output_token_logprobs` is a
 *   list of `[logprob, token_id, text | null]`; `meta_info.finish_reason` is
 *   `{type: "stop", matched}` / `{type: "length", length}` / `{type: "abort", message}`;
 *   `meta_info.weight_version` is the server's current weight version (set by
 *   `/update_weights_*` with `weight_version`, or `/update_weight_version`);
 * - `POST /abort_request {rid}` aborts a running request (SGLang treats `rid` as a prefix, so it
 *   is never sent empty);
 * - MoE routing replay (server started with `--enable-return-routed-experts`):
 *   `return_routed_experts: true` and `routed_experts_start_len` (absolute start position, in
 *   `[0, len(input_ids)]`) ask for `meta_info.routed_experts`, base64 of int32 values of shape
 *   `[T, layers, top_k]` covering positions `[start_len, len(input_ids) + len(output_ids) − 1)`
 *   (`GenerateReqInput`; the shape's layers and top-k are the model's, not sent: configured here).
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
import { Buffer } from "node:buffer";
import { narrowInt32Rows, type TokenRows } from "./token_rows.ts";
import {
  EngineHttp,
  type EngineHttpOptions,
  finishReason,
  routingHeaders,
  weightVersionOf,
} from "./engine_http.ts";

export interface SglangOptions extends EngineHttpOptions {
  /** Backend name rollouts choose it by (default `sglang`). */
  name?: string;
  /** Header carrying the routing key (the rollout id); default `X-Session-ID`; `""` = none. */
  routingHeader?: string;
  /**
   * Ask for MoE routing (`return_routed_experts`) of a model with these many layers, experts per
   * token and experts (the dtype kept: uint8 up to 256 experts, else uint16).
   */
  routedExperts?: { layers: number; topK: number; experts: number };
  /** How the server computes logprobs (recorded with every turn); default `raw`. */
  logprobsMode?: LogprobsMode;
}

interface SglangAnswer {
  output_ids?: unknown;
  meta_info?: {
    output_token_logprobs?: unknown;
    finish_reason?: { type?: unknown; message?: unknown } | string | null;
    weight_version?: unknown;
    routed_experts?: unknown;
  };
}

export class SglangBackend implements GenerationBackend {
  readonly name: string;
  readonly http: EngineHttp;

  constructor(readonly options: SglangOptions) {
    this.name = options.name ?? "sglang";
    this.http = new EngineHttp("SGLang", options);
  }

  async generate(req: GenerationRequest): Promise<Completion> {
    const headers = routingHeaders(this.options.routingHeader, req.routingKey);
    const sampling: Record<string, unknown> = {
      max_new_tokens: req.sampling.max_tokens,
      stop_token_ids: req.sampling.stop_token_ids,
      skip_special_tokens: false,
      no_stop_trim: true,
    };
    if (req.sampling.temperature !== undefined) sampling.temperature = req.sampling.temperature;
    if (req.sampling.top_p !== undefined) sampling.top_p = req.sampling.top_p;
    // A retry gets its own rid: the aborted attempt's rid may still be known to the engine.
    const rid = (a: { index: number }) =>
      a.index === 0 ? req.requestId : `${req.requestId}-retry${a.index}`;

    const res = await this.http.postJson("/generate", {
      signal: req.signal,
      headers,
      body: (a) => ({
        input_ids: req.promptIds,
        sampling_params: sampling,
        return_logprob: true,
        rid: rid(a),
        stream: false,
        ...(this.options.routedExperts
          ? { return_routed_experts: true, routed_experts_start_len: req.routedExpertsFrom ?? 0 }
          : {}),
      }),
      onCancel: (a) => void this.http.notify("/abort_request", { rid: rid(a) }),
    });
    return this.#completion(res.json as SglangAnswer, req);
  }

  #completion(answer: SglangAnswer, req: GenerationRequest): Completion {
    const where = `SGLang at ${this.http.url}/generate`;
    const meta = answer?.meta_info ?? {};
    const triples = Array.isArray(meta.output_token_logprobs)
      ? meta.output_token_logprobs as unknown[]
      : undefined;
    let ids = answer?.output_ids;
    if (ids === undefined && triples) ids = triples.map((t) => Array.isArray(t) ? t[1] : undefined);
    if (!Array.isArray(ids) || !ids.every((t) => Number.isInteger(t) && t >= 0)) {
      throw new GenerationError("engine_failed", `${where} answered without output_ids`);
    }
    let logprobs: number[] | undefined;
    if (triples) {
      const ok = triples.length === ids.length &&
        triples.every((t, i) =>
          Array.isArray(t) && typeof t[0] === "number" && t[1] === (ids as number[])[i]
        );
      if (!ok) {
        throw new GenerationError(
          "engine_failed",
          `${where} sent meta_info.output_token_logprobs that do not match output_ids`,
        );
      }
      logprobs = triples.map((t) => (t as [number])[0]);
    }
    const fr = meta.finish_reason;
    const type = typeof fr === "string" ? fr : fr?.type;
    if (type === "abort") {
      const why = typeof fr === "object" && typeof fr?.message === "string"
        ? `: ${fr.message}`
        : "";
      throw new GenerationError("engine_failed", `${where} aborted the generation${why}`);
    }
    const completion: Completion = {
      output_ids: ids as number[],
      logprobs,
      finish_reason: finishReason(type, ids as number[], req, where),
    };
    const version = weightVersionOf(meta.weight_version);
    if (version !== undefined) completion.weight_version = version;
    completion.logprobs_mode = this.options.logprobsMode ?? "raw";
    if (this.options.routedExperts) {
      completion.routed_experts = this.#routing(meta.routed_experts, req, ids.length, where);
    }
    return completion;
  }

  /** `meta_info.routed_experts` checked against the call's positions, in the configured dtype. */
  #routing(data: unknown, req: GenerationRequest, outputs: number, where: string): TokenRows {
    const { layers, topK, experts } = this.options.routedExperts!;
    const from = req.routedExpertsFrom ?? 0;
    const rows = Math.max(0, req.promptIds.length + outputs - 1 - from);
    const dtype = experts <= 256 ? "uint8" : "uint16";
    const bytes = typeof data === "string" ? Buffer.from(data, "base64") : null;
    if (!bytes || bytes.byteLength !== rows * layers * topK * 4) {
      throw new GenerationError(
        "engine_failed",
        `${where} sent meta_info.routed_experts of ${
          bytes?.byteLength ?? "no"
        } bytes; expected ${rows} rows × ${layers} layers × ${topK} int32 (positions ${from} … ${
          from + rows - 1
        }; is the server started with --enable-return-routed-experts?)`,
      );
    }
    try {
      return narrowInt32Rows(new Uint8Array(bytes), [rows, layers, topK], dtype);
    } catch (e) {
      throw new GenerationError("engine_failed", `${where}: ${(e as Error).message}`);
    }
  }
}
