/**
 * Samples: a rollout's chains turned into training rows (ids, loss and tool-output masks,
 * logprobs, reward, labels), their tree and calls forms, and the log of finished samples a
 * trainer streams with a cursor.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemorySampleLog, type Sample } from "./mod.ts";
 *
 * const log = new MemorySampleLog(100);
 * await log.append([{ rollout_id: "r1" } as Sample, { rollout_id: "r2" } as Sample]);
 * const after = await log.after(1, 10); // a trainer that saw cursor 1 gets the rest once
 * assert.deepEqual(after.map((e) => [e.cursor, e.sample.rollout_id]), [[2, "r2"]]);
 * ```
 *
 * @module
 */
export { buildSamples, chainOf, type SampleOptions } from "./samples.ts";
export { type Sample, sampleJson } from "./sample.ts";
export { type LoggedSample, MemorySampleLog, type SampleLog } from "./sample_log.ts";
export { type CallsExport, callsExport, type TreeExport, treeExport } from "./sample_exports.ts";
export { newestVersion, versionNumber } from "./sample_facts.ts";
export type { TeacherScore } from "./teacher_logprobs.ts";
