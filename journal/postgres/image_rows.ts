/**
 * The images turns show, in the `images` table, by content hash: any replica that sees an image
 * first writes it (a second write of the same hash does nothing), any replica reads it. Images
 * are content, not a rollout's state, so no ownership fences them.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { Sql } from "postgres";

/** Keeps `bytes` under `hash` unless the table has them already. */
export async function putImageRow(sql: Sql, hash: string, bytes: Uint8Array): Promise<void> {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  await sql`INSERT INTO images (hash, bytes) VALUES (${hash}, ${data}) ON CONFLICT DO NOTHING`;
}

/** The bytes kept under `hash`, or null. */
export async function readImageRow(sql: Sql, hash: string): Promise<Uint8Array | null> {
  const [row] = await sql<{ bytes: Uint8Array }[]>`SELECT bytes FROM images WHERE hash = ${hash}`;
  return row ? new Uint8Array(row.bytes) : null;
}
