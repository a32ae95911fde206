/**
 * TEST DOUBLE at the model boundary: a generation backend that answers at once with the ids it
 * was given, so a bench measures the gateway's own work and nothing of inference.
 *
 * @module
 */
import type { Completion, GenerationBackend, GenerationRequest } from "../generation/mod.ts";

export class InstantBackend implements GenerationBackend {
  readonly name = "instant (bench double)";
  #outputIds: number[] = [];
  #logprobs: number[] = [];
  /** Prompt length of the last request, for sanity checks. */
  lastPromptLength = 0;

  /** Sets what every following `generate` returns (with fixed, made-up logprobs). */
  answerWith(outputIds: number[]): void {
    this.#outputIds = outputIds;
    this.#logprobs = outputIds.map((_, i) => -((i % 7) + 1) / 100);
  }

  generate(request: GenerationRequest): Promise<Completion> {
    this.lastPromptLength = request.promptIds.length;
    return Promise.resolve({
      output_ids: this.#outputIds,
      logprobs: this.#logprobs,
      finish_reason: "stop",
    });
  }
}
