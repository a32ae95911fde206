/**
 * The teachers a gateway knows, by name, and the one rollouts get when they name none: what a
 * rollout's `teacher` (`POST /api/rollouts`) resolves to. A rollout names one (`"big"`), gives a
 * vLLM-compatible server of its own (`{"url": …, "model": …}`, made once per URL and model and
 * kept), or `null` for none even where the gateway has a default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Teachers } from "./teachers.ts";
 *
 * const teachers = new Teachers();
 * assert.equal(teachers.choose(undefined), null); // no default: no teacher
 * const spec = { url: "http://127.0.0.1:8001", model: "big" };
 * assert.equal(teachers.get(teachers.choose(spec)!).name, "big");
 * assert.throws(() => teachers.choose("nope"), /unknown teacher nope/);
 * ```
 *
 * @module
 */
import type { Teacher } from "./teacher.ts";
import { VllmTeacher } from "./vllm_teacher.ts";
import type { EngineHttpOptions } from "./engine_http.ts";

/** A teacher as a rollout names it: a name the gateway knows, or a vLLM-compatible server. */
export type TeacherSpec = string | { url: string; model?: string; name?: string };

/** A teacher name no teacher of this gateway has. */
export class UnknownTeacherError extends Error {
  override name = "UnknownTeacherError";
}

/** The name samples carry for a teacher spec. */
export function teacherName(spec: TeacherSpec): string {
  return typeof spec === "string" ? spec : spec.name ?? spec.model ?? spec.url;
}

export interface TeachersOptions {
  named: Record<string, Teacher>;
  /** The name of the one rollouts get when they name none. */
  default?: string;
  /** Timeouts and retries of the servers rollouts name inline. */
  engine?: Omit<EngineHttpOptions, "url">;
}

export class Teachers {
  readonly #named: Record<string, Teacher>;
  readonly #inline = new Map<string, Teacher>();
  readonly #engine: Omit<EngineHttpOptions, "url">;
  readonly default?: string;

  constructor(o: TeachersOptions = { named: {} }) {
    this.#named = o.named;
    this.#engine = o.engine ?? {};
    if (o.default !== undefined && !o.named[o.default]) {
      throw new UnknownTeacherError(`the default teacher ${o.default} is not one of the teachers`);
    }
    this.default = o.default;
  }

  /** The teachers known by name. */
  get names(): string[] {
    return Object.keys(this.#named);
  }

  /**
   * What a rollout that asked for `spec` is scored by: the gateway's default when it names none,
   * nothing for `null`; an unknown name is an {@link UnknownTeacherError}.
   */
  choose(spec: TeacherSpec | null | undefined): TeacherSpec | null {
    if (spec === undefined) return this.default ?? null;
    if (typeof spec === "string" && !this.#named[spec]) {
      const known = this.names.length ? `known: ${this.names.join(", ")}` : "this gateway has none";
      throw new UnknownTeacherError(`unknown teacher ${spec} (${known})`);
    }
    return spec;
  }

  /** The teacher of a chosen spec (a rollout restored after the flags changed: an error). */
  get(spec: TeacherSpec): Teacher {
    if (typeof spec === "string") {
      const t = this.#named[spec];
      if (!t) throw new UnknownTeacherError(`teacher ${spec} is not configured on this gateway`);
      return t;
    }
    const key = `${spec.url}\n${spec.model ?? ""}\n${teacherName(spec)}`;
    let t = this.#inline.get(key);
    if (!t) {
      t = new VllmTeacher({
        ...this.#engine,
        url: spec.url,
        model: spec.model,
        name: teacherName(spec),
      });
      this.#inline.set(key, t);
    }
    return t;
  }
}
