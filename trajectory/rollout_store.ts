/**
 * All rollouts of a gateway, by id and by per-rollout token.
 *
 * @module
 */
import { Rollout, type RolloutSampling } from "./rollout.ts";
import type { SampleOptions } from "./samples.ts";

export interface CreateRollout {
  id?: string;
  metadata?: Record<string, unknown>;
  sampling?: RolloutSampling;
  backend?: string;
  sampleOptions?: Partial<SampleOptions>;
  /** Tokenize special-token text in content as plain text (see `PolicyModel.renderFull`). */
  splitSpecialTokens?: boolean;
}

/** A rollout id that is already taken. */
export class RolloutExistsError extends Error {
  override name = "RolloutExistsError";
}

function randomHex(bytes: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

export class RolloutStore {
  readonly #byId = new Map<string, Rollout>();
  readonly #byToken = new Map<string, Rollout>();

  create(spec: CreateRollout = {}): Rollout {
    const id = spec.id ?? `r_${randomHex(8)}`;
    if (this.#byId.has(id)) throw new RolloutExistsError(`rollout ${id} already exists`);
    const rollout = new Rollout(
      id,
      `rg_${randomHex(24)}`,
      spec.metadata ?? {},
      spec.sampling ?? {},
      spec.backend,
      spec.sampleOptions ?? {},
      spec.splitSpecialTokens ?? false,
    );
    this.#byId.set(id, rollout);
    this.#byToken.set(rollout.token, rollout);
    return rollout;
  }

  get(id: string): Rollout | undefined {
    return this.#byId.get(id);
  }

  byToken(token: string): Rollout | undefined {
    return this.#byToken.get(token);
  }

  list(): Rollout[] {
    return [...this.#byId.values()];
  }

  delete(id: string): boolean {
    const r = this.#byId.get(id);
    if (!r) return false;
    this.#byId.delete(id);
    this.#byToken.delete(r.token);
    return true;
  }
}
