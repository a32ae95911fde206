/**
 * All rollouts of a gateway in memory, by id and by per-rollout token, and the ids of those that
 * expired. It records nothing: every change a caller makes goes through `RolloutActions`, which
 * applies it here and journals it.
 *
 * @module
 */
import { Rollout, type RolloutSampling } from "./rollout.ts";
import type { SampleOptions } from "./samples/mod.ts";
import { randomHex } from "./random_hex.ts";
import type { TokenRowStore } from "./token_rows/mod.ts";
import type { TeacherSpec } from "../generation/mod.ts";

export interface CreateRollout {
  id?: string;
  metadata?: Record<string, unknown>;
  sampling?: RolloutSampling;
  backend?: string;
  sampleOptions?: Partial<SampleOptions>;
  /** A restored rollout keeps its token (a new one gets a random one). */
  token?: string;
  /** A restored rollout keeps its creation time (ms since the epoch). */
  createdAt?: number;
  /** Tokenize special-token text in content as plain text (see `PolicyModel.renderFull`). */
  splitSpecialTokens?: boolean;
  /** The group the rollout belongs to (advantages are relative within a group). */
  group?: string;
  /** Template settings over the gateway's (`Rollout.template`). */
  template?: Record<string, unknown>;
  /** The teacher scoring its turns; `null`: none (the façade resolves the gateway's default). */
  teacher?: TeacherSpec | null;
}

/** A rollout id that is already taken. */
export class RolloutExistsError extends Error {
  override name = "RolloutExistsError";
}

/** No rollout by that id (or token): never created, deleted, or expired after going idle. */
export class UnknownRolloutError extends Error {
  override name = "UnknownRolloutError";
  constructor(readonly expired: boolean, message: string) {
    super(message);
  }
}

export interface RolloutStoreOptions {
  /**
   * A rollout with no activity (agent request, trainer call, pending turn) for this long is
   * dropped from memory; its id then answers `expired`. Default: one hour.
   */
  idleTimeoutMs?: number;
  /** How many expired ids are remembered for that answer. */
  rememberExpired?: number;
  /** Where every rollout's token rows are kept (the journal, else memory). */
  rows?: TokenRowStore;
}

export const DEFAULT_ROLLOUT_IDLE_TIMEOUT_MS = 3_600_000;

export class RolloutStore {
  readonly #byId = new Map<string, Rollout>();
  readonly #byToken = new Map<string, Rollout>();
  /** Ids of rollouts that expired, oldest first, with when. */
  readonly #expired = new Map<string, number>();
  readonly idleTimeoutMs: number;
  readonly #rememberExpired: number;
  readonly #rows?: TokenRowStore;
  #nextSweep = 0;

  constructor(options: RolloutStoreOptions = {}) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_ROLLOUT_IDLE_TIMEOUT_MS;
    this.#rememberExpired = options.rememberExpired ?? 100_000;
    this.#rows = options.rows;
  }

  /** A new rollout, in memory only. */
  create(spec: CreateRollout = {}): Rollout {
    const id = spec.id ?? `r_${randomHex(8)}`;
    if (this.#byId.has(id)) throw new RolloutExistsError(`rollout ${id} already exists`);
    const token = spec.token ?? `rg_${randomHex(24)}`;
    const rollout = new Rollout(
      id,
      token,
      spec.metadata ?? {},
      spec.sampling ?? {},
      spec.backend,
      spec.sampleOptions ?? {},
      spec.splitSpecialTokens ?? false,
      spec.template ?? {},
    );
    if (spec.createdAt !== undefined) rollout.createdAt = rollout.lastActivity = spec.createdAt;
    rollout.group = spec.group ?? null;
    rollout.teacher = spec.teacher ?? null;
    this.add(rollout);
    return rollout;
  }

  /** Puts an existing rollout (a restored one) in the store. */
  add(rollout: Rollout): void {
    if (this.#byId.has(rollout.id)) {
      throw new RolloutExistsError(`rollout ${rollout.id} already exists`);
    }
    this.#expired.delete(rollout.id);
    rollout.rows ??= this.#rows;
    this.#byId.set(rollout.id, rollout);
    this.#byToken.set(rollout.token, rollout);
  }

  /** The rollout `id`, or an {@link UnknownRolloutError} saying whether it expired. */
  require(id: string): Rollout {
    const r = this.#byId.get(id);
    if (r) return r;
    const at = this.#expired.get(id);
    if (at !== undefined) {
      throw new UnknownRolloutError(
        true,
        `rollout ${id} expired at ${new Date(at).toISOString()} after ${
          this.idleTimeoutMs / 1000
        } s without activity`,
      );
    }
    throw new UnknownRolloutError(false, `unknown rollout ${id}`);
  }

  /** Remembers that rollout `id` expired at `at` (a restore leaves it in the journal). */
  markExpired(id: string, at: number): void {
    this.#expired.set(id, at);
    if (this.#expired.size > this.#rememberExpired) {
      this.#expired.delete(this.#expired.keys().next().value!);
    }
  }

  /**
   * Drops rollouts idle for longer than the idle timeout (at most once per tenth of it; the
   * gateway calls this on its way). `busy` keeps a rollout whose turns still wait.
   */
  sweep(busy: (r: Rollout) => boolean, now = Date.now()): Rollout[] {
    if (now < this.#nextSweep) return [];
    this.#nextSweep = now + Math.min(this.idleTimeoutMs / 10, 60_000);
    const expired: Rollout[] = [];
    for (const r of this.#byId.values()) {
      if (now - r.lastActivity > this.idleTimeoutMs && !busy(r)) expired.push(r);
    }
    for (const r of expired) {
      this.delete(r.id);
      this.markExpired(r.id, now);
    }
    return expired;
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

  /** Drops a rollout from memory. */
  delete(id: string): boolean {
    const r = this.#byId.get(id);
    if (!r) return false;
    this.#byId.delete(id);
    this.#byToken.delete(r.token);
    return true;
  }
}
