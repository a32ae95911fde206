/**
 * The compact id transport of the trainer API, chosen per request by the client: `?ids=base64`
 * (or `Accept: application/vnd.rollgate.ids+base64`) sends id arrays as base64 of their
 * little-endian bytes instead of JSON arrays. JSON stays the default (curl, any language).
 *
 * Encodings (named in the body's `ids_encoding`, so a reader never guesses):
 * - token ids (`prompt_ids`, `input_ids`): `int32le`;
 * - masks (`loss_mask`, `sft_mask`): `uint8`, one byte per id;
 * - `logprobs`: `float64le` (exactly the numbers JSON would carry; a NaN where JSON has `null`,
 *   a sampled id whose turn reported no logprob); `position_rewards` and `teacher_logprobs` the
 *   same;
 * - kept sets (`sampling_mask.offsets`, `.ids`): `int32le`.
 *
 * A 128k-id prompt is ~700 KB of JSON and ~1.9 ms to write; as base64 it is 683 KB of ASCII
 * written by one native call, with nothing per id but a copy into an `Int32Array`.
 *
 * @example
 * ```ts
 * import { base64Ids, idsFromBase64 } from "./id_transport.ts";
 * const text = base64Ids([151644, 872, 198]); // "XFACAGgDAADGAAAA"
 * idsFromBase64(text); // Int32Array [151644, 872, 198]
 * ```
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { jsonWithIds, type PendingRequest, type PendingScore } from "../../generation/mod.ts";
import type { Sample } from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import type { DeltaBase } from "./prompt_bases.ts";

export type IdEncoding = "json" | "base64";

/** What a client asks for with `Accept` instead of the query parameter. */
export const BASE64_IDS_MEDIA_TYPE = "application/vnd.rollgate.ids+base64";

/** The encoding a request asks for: `?ids=` first, then `Accept`, else JSON. */
export function requestedIdEncoding(
  query: string | undefined,
  accept: string | null | undefined,
): IdEncoding {
  if (query !== undefined) {
    if (query === "json" || query === "base64") return query;
    throw new GatewayError(400, `ids must be json or base64, not ${JSON.stringify(query)}`);
  }
  return accept?.includes(BASE64_IDS_MEDIA_TYPE) ? "base64" : "json";
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function base64Of(view: ArrayBufferView): string {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString("base64");
}

/** Base64 of the ids as little-endian int32. */
export function base64Ids(ids: ArrayLike<number>): string {
  const array = ids instanceof Int32Array ? ids : Int32Array.from(ids);
  if (LITTLE_ENDIAN) return base64Of(array);
  const view = new DataView(new ArrayBuffer(array.length * 4));
  array.forEach((id, i) => view.setInt32(i * 4, id, true));
  return base64Of(view);
}

/** Base64 of a 0/1 mask, one byte per id. */
export function base64Mask(mask: ArrayLike<number>): string {
  return base64Of(mask instanceof Uint8Array ? mask : Uint8Array.from(mask));
}

/** Base64 of numbers as little-endian float64. */
export function base64Float64(values: ArrayLike<number>): string {
  const array = values instanceof Float64Array ? values : Float64Array.from(values);
  if (LITTLE_ENDIAN) return base64Of(array);
  const view = new DataView(new ArrayBuffer(array.length * 8));
  array.forEach((x, i) => view.setFloat64(i * 8, x, true));
  return base64Of(view);
}

/**
 * A pending request's JSON text as the client asked for it, written from the prompt's view of
 * its chain's ids (no array of the ids is built). With `base` (the delta form) `prompt_ids` holds
 * only the ids after the base's `length`, and the body says so (`prompt_base`, `prompt_length`).
 */
export function pendingBody(
  request: PendingRequest,
  encoding: IdEncoding,
  base?: DeltaBase,
): string {
  const { prompt_ids, prompt_base: _, ...rest } = request;
  const ids = base ? prompt_ids.subarray(base.length) : prompt_ids;
  const fields = base ? { ...rest, prompt_length: prompt_ids.length, prompt_base: base } : rest;
  if (encoding === "json") {
    // The full form as it always was (keys in the request's order, no `prompt_base`).
    return jsonWithIds(
      base ? { ...fields, prompt_ids: ids } : { ...request, prompt_base: undefined },
    );
  }
  // The base64 text goes in as it is: `JSON.stringify` would scan all of it for characters to
  // escape (half a millisecond at 128k ids) and base64 has none.
  const head = JSON.stringify({ ...fields, ids_encoding: "base64" });
  return `${head.slice(0, -1)},"prompt_ids":"${base64Ids(ids)}"}`;
}

/** A sample as the client asked for it (JSON: what `JSON.stringify` writes for a sample). */
export function sampleBody(sample: Sample, encoding: IdEncoding): unknown {
  if (encoding === "json") return sample;
  const kept = sample.sampling_mask?.setsOrNull();
  return {
    ...sample,
    input_ids: base64Ids(sample.input_ids),
    loss_mask: base64Mask(sample.loss_mask),
    logprobs: base64Float64(sample.logprobs),
    sft_mask: base64Mask(sample.sft_mask),
    ...(sample.position_rewards
      ? { position_rewards: base64Float64(sample.position_rewards) }
      : {}),
    ...(sample.teacher_logprobs
      ? { teacher_logprobs: base64Float64(sample.teacher_logprobs) }
      : {}),
    ...(sample.sampling_mask
      ? {
        sampling_mask: kept && { offsets: base64Ids(kept.offsets), ids: base64Ids(kept.ids) },
      }
      : {}),
    ids_encoding: "base64",
  };
}

/** A pending teacher request's JSON text, its ids as the client asked for them. */
export function pendingScoreBody(request: PendingScore, encoding: IdEncoding): string {
  if (encoding === "json") return jsonWithIds(request);
  const { input_ids, ...rest } = request;
  const head = JSON.stringify({ ...rest, ids_encoding: "base64" });
  return `${head.slice(0, -1)},"input_ids":"${base64Ids(input_ids)}"}`;
}

/** The ids of `base64Ids` (for tests and TypeScript clients). */
export function idsFromBase64(text: string): Int32Array {
  const bytes = Buffer.from(text, "base64");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Int32Array.from({ length: bytes.byteLength / 4 }, (_, i) => view.getInt32(i * 4, true));
}
