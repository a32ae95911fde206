/**
 * Readiness as a list of named checks: the gateway is ready when every check passes. Each part
 * that can keep the gateway from serving adds its own (the model files loading, a shutdown
 * draining, a journal opening), so `/ready` says which one is not.
 *
 * @module
 */

/** A check's verdict: `true` when ready, else why not. */
export type CheckResult = true | string;

export interface CheckReport {
  name: string;
  ok: boolean;
  /** Why the check fails; absent when it passes. */
  detail?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: CheckReport[];
}

/**
 * @example
 * ```ts
 * const readiness = new Readiness();
 * let loaded = false;
 * readiness.add("model", () => loaded || "loading the model files");
 * (await readiness.report()).ready; // false
 * loaded = true;
 * (await readiness.report()).ready; // true
 * ```
 */
export class Readiness {
  readonly #checks: { name: string; check: () => CheckResult | Promise<CheckResult> }[] = [];

  /** Adds a check, evaluated on every report. */
  add(name: string, check: () => CheckResult | Promise<CheckResult>): this {
    this.#checks.push({ name, check });
    return this;
  }

  async report(): Promise<ReadinessReport> {
    const checks = await Promise.all(this.#checks.map(async ({ name, check }) => {
      let result: CheckResult;
      try {
        result = await check();
      } catch (e) {
        result = `check failed: ${(e as Error).message}`;
      }
      return result === true ? { name, ok: true } : { name, ok: false, detail: result };
    }));
    return { ready: checks.every((c) => c.ok), checks };
  }
}
