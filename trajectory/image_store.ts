/**
 * Where the bytes of the images turns show are kept: by content hash (sha256), on disk or in a
 * database, never in memory. A turn stores the images of its request that the store lacks before
 * its prompt reaches a backend; the message tree, the turns and the journal hold only the hashes,
 * and trainers read the bytes back by hash (`GET /api/images/:hash`) to compute pixel values.
 *
 * The journal is one (`Journal` extends it: SQLite's keeps a content-addressed directory beside
 * its file, PostgreSQL's a table every replica reads); a gateway without a journal is given one of
 * its own.
 *
 * @module
 */

export interface ImageStore {
  /**
   * Keeps `bytes` under `hash` (their sha256, lowercase hex); resolves once they are durable. An
   * image the store holds already is not written again.
   */
  putImage(hash: string, bytes: Uint8Array): Promise<void>;
  /** The bytes kept under `hash`, or null when the store has none. */
  readImage(hash: string): Promise<Uint8Array | null>;
}
