/**
 * A sample as a row of the sample log: its number arrays (ids, masks, logprobs) apart from the
 * rest, in binary (`array_codec.ts`), the rest as JSON with `null` in their place.
 *
 * @module
 */
import { packArrays, unpackArrays } from "./array_codec.ts";

/** A sample's number arrays apart (stored in binary); `null` holds their place in the JSON. */
export function splitArrays(
  value: Record<string, unknown>,
): { data: Record<string, unknown>; arrays: Uint8Array | null } {
  const data: Record<string, unknown> = {};
  const arrays: Record<string, number[]> = {};
  let any = false;
  for (const [k, entry] of Object.entries(value)) {
    // A built sample holds typed arrays (`Int32Array` ids, byte masks): stored as number arrays.
    const v = ArrayBuffer.isView(entry) ? Array.from(entry as unknown as ArrayLike<number>) : entry;
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number")) {
      arrays[k] = v;
      data[k] = null;
      any = true;
    } else {
      data[k] = v;
    }
  }
  return { data, arrays: any ? packArrays(arrays) : null };
}

export function joinArrays(
  data: Record<string, unknown>,
  blob: Uint8Array | null,
): Record<string, unknown> {
  if (!blob) return data;
  for (const [k, v] of Object.entries(unpackArrays(blob))) data[k] = v;
  return data;
}
