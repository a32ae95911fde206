/**
 * Token ids as the `pending` table keeps the ones appended so far: int32, little-endian.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** Ids as the table keeps them: int32, little-endian. */
export function idBytes(ids: readonly number[]): Buffer {
  const b = Buffer.alloc(ids.length * 4);
  for (let i = 0; i < ids.length; i++) b.writeInt32LE(ids[i], i * 4);
  return b;
}

export function idsOf(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}
