/**
 * A vLLM-compatible server as a teacher: `POST /v1/completions` with the sequence as `prompt`
 * (token ids, used as they are), `prompt_logprobs: 0` and `max_tokens: 1`; vLLM answers
 * `choices[0].prompt_logprobs` with one entry per prompt position, `null` first, then
 * `{"<id>": {logprob, rank, decoded_token}}` holding the prompt's own id (vLLM 0.32
 * `CompletionResponseChoice.prompt_logprobs`). The logprobs are the teacher's log-softmax before
 * any sampling setting (temperature does not touch prompt logprobs). The teacher must share the
 * student's tokenizer: an id it does not have is an answer without it, an error.
 *
 * Cost: vLLM reads no prefix cache for a request with `prompt_logprobs` (its `SamplingParams`
 * sets `skip_reading_prefix_cache`), so every scoring is a full prefill of the sequence.
 *
 * @module
 */
import { EngineHttp, type EngineHttpOptions } from "./engine_http.ts";
import { GenerationError } from "./backend.ts";
import { positionCount, type Teacher, type TeacherRequest } from "./teacher.ts";

export interface VllmTeacherOptions extends EngineHttpOptions {
  name: string;
  /** The `model` field (the served model name); omitted when unset (vLLM's first model). */
  model?: string;
  /** Scorings sent at once at most (default 2). */
  concurrency?: number;
}

/** Per-attempt deadline of a scoring: a prefill of a long sequence on a small server is slow. */
const DEFAULT_TEACHER_TIMEOUT_MS = 300_000;

export class VllmTeacher implements Teacher {
  readonly name: string;
  readonly concurrency: number;
  readonly http: EngineHttp;

  constructor(readonly options: VllmTeacherOptions) {
    this.name = options.name;
    this.concurrency = options.concurrency ?? 2;
    this.http = new EngineHttp("vLLM teacher", {
      timeoutMs: DEFAULT_TEACHER_TIMEOUT_MS,
      ...options,
    });
  }

  async score(req: TeacherRequest): Promise<Float64Array> {
    const path = "/v1/completions";
    const where = `vLLM teacher ${this.name} at ${this.http.url}${path}`;
    const res = await this.http.postJson(path, {
      signal: req.signal,
      body: () => ({
        ...(this.options.model ? { model: this.options.model } : {}),
        prompt: req.ids,
        max_tokens: 1,
        temperature: 0,
        prompt_logprobs: 0,
      }),
    });
    return promptLogprobs(res.json, req.ids, req.positions, where);
  }
}

/**
 * vLLM's answer to a `prompt_logprobs` request read at `positions` of `ids`: one logprob per
 * position, range after range. Anything else (no entry per id, an entry without the id it
 * stands at, a logprob above 0) is an `engine_failed` error naming the position.
 */
export function promptLogprobs(
  json: unknown,
  ids: Int32Array,
  positions: readonly [number, number][],
  where: string,
): Float64Array {
  const rows = (json as { choices?: { prompt_logprobs?: unknown }[] } | null)?.choices?.[0]
    ?.prompt_logprobs;
  if (!Array.isArray(rows) || rows.length !== ids.length) {
    throw new GenerationError(
      "engine_failed",
      `${where} answered without one prompt_logprobs entry per id (${ids.length})`,
    );
  }
  const out = new Float64Array(positionCount(positions));
  let k = 0;
  for (const [start, end] of positions) {
    for (let p = start; p < end; p++) {
      const hit = (rows[p] as Record<string, { logprob?: unknown }> | null)?.[String(ids[p])];
      const lp = hit?.logprob;
      if (typeof lp !== "number" || !(lp <= 0)) {
        throw new GenerationError(
          "engine_failed",
          `${where} gave no logprob for id ${ids[p]} at position ${p}`,
        );
      }
      out[k++] = lp;
    }
  }
  return out;
}
