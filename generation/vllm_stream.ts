/**
 * Reading a streamed vLLM answer (`stream: true`, either endpoint of `vllm_wire.ts`): server-sent
 * `data:` chunks, each with the ids sampled since the previous one (and their logprobs and kept
 * sets); the last carries `finish_reason` (and, from `/inference/v1/generate`, the weight-version
 * spans and routing); `data: [DONE]` ends the stream. Every chunk's ids are passed on as they
 * arrive, and the chunks are merged into one {@link VllmChoice}, so one validation path checks
 * streamed and whole answers.
 *
 * @module
 */
import { GenerationError } from "./backend.ts";
import { sseMessages } from "./sse_reader.ts";
import { emptyChoice, mergeChunk, type VllmApi, type VllmChoice, vllmChoice } from "./vllm_wire.ts";

/** Consumes the event stream; returns the merged choice. */
export async function readVllmStream(
  res: Response,
  api: VllmApi,
  where: string,
  onTokens?: (ids: number[]) => void,
): Promise<VllmChoice> {
  const merged = emptyChoice(api);
  for await (const message of sseMessages(res.body!)) {
    const data = message.data.trim();
    if (data === "[DONE]") continue;
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new GenerationError(
        "engine_failed",
        `${where} streamed a chunk that is not JSON: ${data.slice(0, 200)}`,
      );
    }
    const error = (chunk as { error?: { message?: unknown } })?.error;
    if (error) {
      // vLLM reports a failure inside a started stream as a chunk of its own.
      throw new GenerationError(
        "engine_failed",
        `${where} failed the generation: ${String(error.message ?? JSON.stringify(error))}`,
      );
    }
    const choice = vllmChoice(api, chunk);
    if (choice) mergeChunk(merged, choice, where, onTokens);
    else merged.weight_version ??= (chunk as { weight_version?: unknown })?.weight_version;
  }
  return merged;
}
