/**
 * The events a trainer's answer writes beside a rollout's journal events (`events`, with `ref`
 * naming the request): one type per kind, built and read here and nowhere else. They are the
 * trainer side's, not the façade's: a restore or a takeover never replays them
 * (`PgJournal.events` leaves {@link REQUEST_EVENT_KINDS} out); the owner reads one when it learns
 * its request was resolved, and a relaunched turn finds it under the same request id.
 *
 * @module
 */
import type { Completion } from "../../generation/mod.ts";
import { packArrays, unpackArrays } from "../array_codec.ts";

export const REQUEST_EVENT_KINDS = ["request_completed", "request_failed"] as const;

export type RequestEventKind = typeof REQUEST_EVENT_KINDS[number];

/** A trainer's completion: what the turn records, except its routing rows (kept on the request). */
export interface RequestCompleted {
  kind: "request_completed";
  data: {
    request_id: string;
    finish_reason: Completion["finish_reason"];
    weight_version?: Completion["weight_version"];
    logprobs_mode?: Completion["logprobs_mode"];
    /** The width of each kept set (`sampling_mask`'s rows), when sent. */
    sampling_mask_width?: number;
  };
  /** `output_ids` and, when sent, `logprobs` and `sampling_mask`, packed (`array_codec.ts`). */
  arrays: Uint8Array;
}

/** A trainer's failure: the agent gets `error` with `status` (502 when null). */
export interface RequestFailed {
  kind: "request_failed";
  data: { request_id: string; error: string; status: number | null };
  arrays: null;
}

export type RequestEvent = RequestCompleted | RequestFailed;

export function requestCompleted(
  requestId: string,
  c: Omit<Completion, "routed_experts">,
): RequestCompleted {
  const arrays: Record<string, ArrayLike<number>> = { output_ids: c.output_ids };
  if (c.logprobs) arrays.logprobs = c.logprobs;
  const data: RequestCompleted["data"] = { request_id: requestId, finish_reason: c.finish_reason };
  const kept = c.sampling_mask;
  if (kept) {
    arrays.sampling_mask = new Int32Array(
      kept.bytes.buffer,
      kept.bytes.byteOffset,
      kept.bytes.byteLength / 4,
    );
    data.sampling_mask_width = kept.shape[2];
  }
  if (c.weight_version !== undefined) data.weight_version = c.weight_version;
  if (c.logprobs_mode !== undefined) data.logprobs_mode = c.logprobs_mode;
  return { kind: "request_completed", data, arrays: packArrays(arrays) };
}

export function requestFailed(requestId: string, error: string, status?: number): RequestFailed {
  return {
    kind: "request_failed",
    data: { request_id: requestId, error, status: status ?? null },
    arrays: null,
  };
}

/** A stored request event, typed by its kind; undefined for a row of another kind. */
export function readRequestEvent(
  kind: string,
  data: string,
  arrays: Uint8Array | null,
): RequestEvent | undefined {
  if (kind === "request_completed" && arrays) {
    return { kind, data: JSON.parse(data), arrays };
  }
  if (kind === "request_failed") return { kind, data: JSON.parse(data), arrays: null };
  return undefined;
}

/** The completion a `request_completed` event holds (without routing rows). */
export function completionOf(e: RequestCompleted): Completion {
  const arrays = unpackArrays(e.arrays);
  const completion: Completion = {
    output_ids: arrays.output_ids ?? [],
    finish_reason: e.data.finish_reason,
  };
  if (arrays.logprobs) completion.logprobs = arrays.logprobs;
  if (e.data.weight_version !== undefined) completion.weight_version = e.data.weight_version;
  if (e.data.logprobs_mode !== undefined) completion.logprobs_mode = e.data.logprobs_mode;
  if (arrays.sampling_mask && e.data.sampling_mask_width) {
    const values = Int32Array.from(arrays.sampling_mask);
    completion.sampling_mask = {
      dtype: "int32",
      shape: [values.length / e.data.sampling_mask_width, 1, e.data.sampling_mask_width],
      bytes: new Uint8Array(values.buffer),
    };
  }
  return completion;
}
