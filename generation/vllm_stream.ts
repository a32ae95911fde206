/**
 * Reading a streamed vLLM `/v1/completions` answer (`stream: true`): server-sent `data:` chunks,
 * each with the ids sampled since the previous one in `choices[0].token_ids` (with
 * `return_token_ids`) and their logprobs in `choices[0].logprobs.token_logprobs`; the last
 * carries `finish_reason`; `data: [DONE]` ends the stream. Every chunk's ids are passed on as they
 * arrive, and the whole answer is returned in the non-streaming shape, so one validation path
 * checks both.
 *
 * @module
 */
import { GenerationError } from "./backend.ts";
import { sseMessages } from "./sse_reader.ts";

interface StreamChoice {
  token_ids?: unknown;
  logprobs?: { token_logprobs?: unknown } | null;
  finish_reason?: unknown;
}

function isIds(v: unknown): v is number[] {
  return Array.isArray(v) && v.every((t) => Number.isInteger(t) && t >= 0);
}

/** Consumes the event stream; returns `{choices: [{token_ids, logprobs, finish_reason}], …}`. */
export async function readVllmStream(
  res: Response,
  where: string,
  onTokens?: (ids: number[]) => void,
): Promise<unknown> {
  const ids: number[] = [];
  const logprobs: number[] = [];
  let withLogprobs = true;
  let finish: unknown = null;
  let weightVersion: unknown;
  const handle = (data: string) => {
    if (data === "[DONE]") return;
    let chunk: { choices?: StreamChoice[]; weight_version?: unknown };
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new GenerationError(
        "engine_failed",
        `${where} streamed a chunk that is not JSON: ${data.slice(0, 200)}`,
      );
    }
    weightVersion ??= chunk.weight_version;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.token_ids ?? [];
    if (!isIds(delta)) {
      throw new GenerationError(
        "engine_failed",
        `${where} streamed a chunk without choices[0].token_ids (vLLM ≥ 0.10.2 sends them with return_token_ids)`,
      );
    }
    const lps = choice.logprobs?.token_logprobs;
    if (Array.isArray(lps) && lps.length === delta.length) logprobs.push(...(lps as number[]));
    else if (delta.length > 0) withLogprobs = false;
    ids.push(...delta);
    if (delta.length > 0) onTokens?.(delta);
    if (choice.finish_reason != null) finish = choice.finish_reason;
  };
  for await (const message of sseMessages(res.body!)) handle(message.data.trim());
  return {
    weight_version: weightVersion,
    choices: [{
      token_ids: ids,
      logprobs: withLogprobs ? { token_logprobs: logprobs } : null,
      finish_reason: finish,
    }],
  };
}
