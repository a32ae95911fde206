/**
 * Who generates a turn's tokens. Every producer is a {@link GenerationBackend}: the interception
 * gate (a trainer takes pending requests and answers with its own engine's ids), vLLM and SGLang
 * (called directly over HTTP with the prompt ids). The pause gate holds new generations while a
 * trainer syncs weights. Failures are {@link GenerationError}s with a kind; the gateway alone
 * decides which HTTP status each kind becomes.
 *
 * - `backend.ts`: the contract (`GenerationRequest`, `Completion`, `GenerationError`).
 * - `gate.ts`: the interception gate; `gate_completion.ts`: its `PendingRequest`s and how a
 *   completion is checked; `gate_reports.ts`: leases and counts.
 * - `request_queue.ts`: what the trainer API drives (the gate, or a replicated queue).
 * - `lease_queue.ts`: delivery with ack, lease and redelivery, behind the gate and the teacher queue.
 * - `pause_gate.ts`: pause and drain for weight syncs (and the weight version in force).
 * - `teacher.ts`: the teacher contract (on-policy distillation): a vLLM-compatible server
 *   (`vllm_teacher.ts`) or the trainer through the trainer API (`teacher_queue.ts`), by name
 *   (`teachers.ts`).
 * - `engine_http.ts`: retries, timeouts and cancellation shared by the engine backends.
 * - `ids_json.ts`: JSON bodies whose ids are typed arrays (prompts are views, never copied).
 * - `vllm.ts`, `sglang.ts`: the engines; vLLM's two endpoints read into one shape
 *   (`vllm_wire.ts`, `vllm_stream.ts`) and checked once (`vllm_answer.ts`); `npy.ts` reads the
 *   `.npy` arrays vLLM sends routing in.
 * - `token_rows.ts`: per-position engine data (MoE routing, kept-token sets); `kept_sets.ts`:
 *   kept-token sets (`sampling_mask`) checked and stored as such rows.
 * - `vllm_render.ts` (+ `vllm_render_wire.ts`): vLLM rendering prompts and parsing answers for
 *   the `engine` model family.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { InterceptionGate } from "./mod.ts";
 *
 * const gate = new InterceptionGate();
 * const answer = gate.generate({
 *   requestId: "req_1",
 *   rolloutId: "r1",
 *   turnId: "r1.0",
 *   promptIds: Int32Array.of(1, 2, 3),
 *   sampling: { max_tokens: 16, stop_token_ids: [0] },
 * });
 * // What a trainer's long poll gets; with `leased` (`?ack=1`) it comes acknowledged for 30 s.
 * const pending = await gate.next(1000, undefined, undefined, 30_000, {});
 * assert.equal(pending!.request_id, "req_1");
 * assert.equal(pending!.lease!.lease_ms, 30_000);
 * gate.complete(pending!.request_id, { output_ids: [7, 0], finish_reason: "stop" });
 * assert.deepEqual((await answer).output_ids, [7, 0]);
 * ```
 *
 * @module
 */
export {
  abortError,
  type Completion,
  type FinishReason,
  type GenerationBackend,
  GenerationError,
  type GenerationErrorKind,
  type GenerationRequest,
  type LogprobsMode,
  type PromptBase,
  type SamplingRequest,
  type VersionRun,
} from "./backend.ts";
export {
  decodeTokenRows,
  encodeTokenRows,
  rowBytes,
  type RowDtype,
  TOKEN_ROW_FIELDS,
  type TokenRowField,
  type TokenRows,
  type TokenRowsWire,
} from "./token_rows.ts";
export { KEPT_ID_PAD } from "./kept_sets.ts";
export {
  DEFAULT_ACK_TIMEOUT_MS,
  DEFAULT_LEASE_MS,
  type GateOptions,
  InterceptionGate,
  MAX_LEASE_MS,
} from "./gate.ts";
export type { GateStats, Lease } from "./gate_reports.ts";
export type { HandedRequest, LeasedNext, RequestQueue } from "./request_queue.ts";
export {
  type CompleteResult,
  completionKeptSets,
  completionRows,
  type GateCompletion,
  type PendingRequest,
  type RowsExpected,
  withVersionRuns,
} from "./gate_completion.ts";
export { GateError, type GateErrorKind } from "./gate_error.ts";
export { PauseGate, type PauseStatus } from "./pause_gate.ts";
export type { Teacher } from "./teacher.ts";
export { VllmTeacher } from "./vllm_teacher.ts";
export { type PendingScore, TeacherQueue } from "./teacher_queue.ts";
export { teacherName, Teachers, type TeacherSpec, UnknownTeacherError } from "./teachers.ts";
export { DEFAULT_ENGINE_RETRIES, DEFAULT_ENGINE_TIMEOUT_MS } from "./engine_http.ts";
export { jsonWithIds } from "./ids_json.ts";
export { VllmBackend, type VllmOptions } from "./vllm.ts";
export type { VllmApi } from "./vllm_wire.ts";
export { encodeNpy } from "./npy.ts";
export { VllmRender } from "./vllm_render.ts";
export { parseSseText } from "./sse_reader.ts";
export { SglangBackend } from "./sglang.ts";
