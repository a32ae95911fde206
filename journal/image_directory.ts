/**
 * Images on disk by content hash: `<dir>/<first two hex digits>/<sha256>`, one file per image,
 * written once. The SQLite journal keeps one beside its file (`<data-dir>/images/`); a gateway
 * without a journal gets one in a temporary directory.
 *
 * A write is a temporary file, fsynced, renamed into place, and the folder fsynced, so an image
 * is whole or absent after a crash, and durable before the turn that shows it is journaled. The
 * hashes known to be on disk are remembered (64 hex digits each), so an image sent again (every
 * later request of a conversation re-sends its images) costs a set lookup; after a restart the
 * first sighting of each costs a `stat`.
 *
 * @module
 */
import { join } from "node:path";
import type { ImageStore } from "../trajectory/mod.ts";

/** A sha256 in lowercase hex: what names an image (and nothing else reaches the file system). */
export const IMAGE_HASH = /^[0-9a-f]{64}$/;

export class ImageDirectory implements ImageStore {
  readonly #known = new Set<string>();
  /** Writes in progress by hash: two turns showing a new image at once write it once. */
  readonly #writing = new Map<string, Promise<void>>();

  constructor(readonly dir: string) {}

  /** The file of an image (the hash is checked first). */
  path(hash: string): string {
    if (!IMAGE_HASH.test(hash)) throw new Error(`not an image hash: ${JSON.stringify(hash)}`);
    return join(this.dir, hash.slice(0, 2), hash);
  }

  putImage(hash: string, bytes: Uint8Array): Promise<void> {
    if (this.#known.has(hash)) return Promise.resolve();
    let writing = this.#writing.get(hash);
    if (!writing) {
      writing = this.#write(hash, bytes).finally(() => this.#writing.delete(hash));
      this.#writing.set(hash, writing);
    }
    return writing;
  }

  async readImage(hash: string): Promise<Uint8Array | null> {
    if (!IMAGE_HASH.test(hash)) return null;
    try {
      return await Deno.readFile(this.path(hash));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  }

  async #write(hash: string, bytes: Uint8Array): Promise<void> {
    const path = this.path(hash);
    const folder = join(this.dir, hash.slice(0, 2));
    try {
      await Deno.stat(path);
      this.#known.add(hash);
      return;
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    await Deno.mkdir(folder, { recursive: true });
    const temporary = `${path}.${crypto.randomUUID()}.part`;
    try {
      const file = await Deno.open(temporary, { write: true, createNew: true, mode: 0o600 });
      try {
        for (let at = 0; at < bytes.length;) at += await file.write(bytes.subarray(at));
        await file.syncData();
      } finally {
        file.close();
      }
      await Deno.rename(temporary, path);
    } catch (e) {
      await Deno.remove(temporary).catch(() => {});
      throw e;
    }
    const dir = await Deno.open(folder, { read: true });
    try {
      await dir.sync();
    } finally {
      dir.close();
    }
    this.#known.add(hash);
  }
}
