/**
 * The teachers `serve` is started with (on-policy distillation): `--teacher NAME=URL[#MODEL]`
 * for a vLLM-compatible server, `--teacher NAME=trainer` for the trainer itself through the
 * trainer API (one process only: replicas' scorings are their owner's), repeated for several;
 * `--teacher-url URL` (`--teacher-model NAME`) for the teacher named `default` that every rollout
 * naming none gets; `--default-teacher NAME` makes another the default.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { teachersFromFlags } from "./teacher_flags.ts";
 *
 * const { teachers, queue } = teachersFromFlags({
 *   teacher: ["big=http://127.0.0.1:8001#Qwen3-32B", "self=trainer"],
 *   "default-teacher": "big",
 * }, { replicated: false });
 * assert.deepEqual(teachers.names, ["big", "self"]);
 * assert.equal(teachers.default, "big");
 * assert.ok(queue); // the trainer's scorings wait there
 * ```
 *
 * @module
 */
import { type Teacher, TeacherQueue, Teachers, VllmTeacher } from "../generation/mod.ts";
import { integerFlag, POSITIVE } from "./flags.ts";
import { UsageError } from "./usage_error.ts";

/** The teacher flags of `serve` (`parseArgs` options). */
export const TEACHER_FLAGS = {
  teacher: { type: "string", multiple: true },
  "teacher-url": { type: "string" },
  "teacher-model": { type: "string" },
  "default-teacher": { type: "string" },
  "teacher-concurrency": { type: "string" },
} as const;

export interface TeacherFlagValues {
  teacher?: string[];
  "teacher-url"?: string;
  "teacher-model"?: string;
  "default-teacher"?: string;
  "teacher-concurrency"?: string;
}

export function teachersFromFlags(
  values: TeacherFlagValues,
  o: { replicated: boolean; engine?: { timeoutMs?: number; retries?: number }; env?: string },
): { teachers: Teachers; queue?: TeacherQueue } {
  const concurrency = integerFlag(values["teacher-concurrency"], "--teacher-concurrency", POSITIVE);
  const named: Record<string, Teacher> = {};
  let queue: TeacherQueue | undefined;
  const server = (name: string, url: string, model?: string) => {
    try {
      new URL(url);
    } catch {
      throw new UsageError(`--teacher ${name}: ${url} is not a URL`);
    }
    return new VllmTeacher({ name, url, model, concurrency, ...o.engine });
  };
  for (const flag of values.teacher ?? []) {
    const m = /^([A-Za-z0-9_.:-]{1,128})=(.+)$/.exec(flag);
    if (!m) throw new UsageError(`--teacher must be NAME=URL[#MODEL] or NAME=trainer, got ${flag}`);
    const [, name, target] = m;
    if (named[name]) throw new UsageError(`--teacher ${name} is named twice`);
    if (target === "trainer") {
      if (o.replicated) {
        throw new UsageError(
          `--teacher ${name}=trainer: replicas do not share teacher requests; use one gateway, or a vLLM-compatible teacher`,
        );
      }
      named[name] = (queue ??= new TeacherQueue()).teacher(name);
    } else {
      const [url, model] = target.split("#");
      named[name] = server(name, url, model || undefined);
    }
  }
  const url = values["teacher-url"] ?? o.env;
  if (url) {
    if (named.default) throw new UsageError("--teacher-url is the teacher named default: once");
    named.default = server("default", url, values["teacher-model"]);
  } else if (values["teacher-model"]) {
    throw new UsageError("--teacher-model names the model of --teacher-url");
  }
  const chosen = values["default-teacher"] ?? (url ? "default" : undefined);
  if (chosen !== undefined && !named[chosen]) {
    throw new UsageError(`--default-teacher ${chosen} is not a --teacher`);
  }
  return { teachers: new Teachers({ named, default: chosen, engine: o.engine }), queue };
}
