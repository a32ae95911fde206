/**
 * TEST DOUBLE at the generation boundary: an in-memory `GenerationBackend` that answers each
 * request with the next scripted completion (ids the test tokenized with the real tokenizer) and
 * records every request it saw. No HTTP, no trainer, no engine.
 *
 * @module
 */
import type { Completion, GenerationBackend, GenerationRequest } from "../../generation/mod.ts";
import { expertRows, type RoutingShape } from "./sample_facts_check.ts";

export class InMemoryBackendTestDouble implements GenerationBackend {
  readonly name = "in-memory-test-double";
  /** Every request, in arrival order. */
  readonly requests: GenerationRequest[] = [];
  readonly #script: Completion[] = [];

  /**
   * `routing`: every completion carries `routed_experts` from the request's `routedExpertsFrom`
   * (values a function of position and token, see `expertOf`), as an SGLang engine sends them.
   */
  constructor(readonly options: { routing?: RoutingShape } = {}) {}

  /** Queues the completion the next `generate` call returns. */
  enqueue(completion: Completion): this {
    this.#script.push(completion);
    return this;
  }

  /** Completions queued and not yet returned. */
  get pending(): number {
    return this.#script.length;
  }

  generate(request: GenerationRequest): Promise<Completion> {
    this.requests.push(request);
    const next = this.#script.shift();
    if (!next) {
      return Promise.reject(new Error(`test double: no scripted completion for ${request.turnId}`));
    }
    const done: Completion = { ...next, output_ids: [...next.output_ids] };
    if (this.options.routing) {
      done.routed_experts = expertRows(
        this.options.routing,
        request.promptIds,
        done.output_ids,
        request.routedExpertsFrom ?? 0,
      );
    }
    return Promise.resolve(done);
  }
}
