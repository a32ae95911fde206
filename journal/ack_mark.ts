/**
 * The acknowledgement mark: beside the journal, the highest event sequence number and sample
 * cursor it has committed, rewritten in place (16 bytes, no fsync, like the WAL under
 * `synchronous = NORMAL`) after every commit. A journal that holds less than its mark has lost
 * changes that were acknowledged: its write-ahead log was deleted or cut, or the file was
 * truncated or replaced. SQLite cannot tell (it restores the valid prefix of a WAL without a
 * word); the mark can, so a damaged journal is refused instead of restored short.
 *
 * @module
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from "node:fs";

/** How far a journal got: its highest event `seq` and sample `cursor`. */
export interface JournalExtent {
  events: number;
  samples: number;
}

export class AckMark {
  readonly #bytes = new Uint8Array(16);
  readonly #view = new DataView(this.#bytes.buffer);
  #fd: number | null = null;

  constructor(readonly path: string) {}

  /** What the last run committed; `null` when there is no mark (a new or older journal). */
  read(): JournalExtent | null {
    if (!existsSync(this.path)) return null;
    const bytes = readFileSync(this.path);
    // Cut short only by a crash during the very first write: nothing was acknowledged yet.
    if (bytes.byteLength < 16) return null;
    const view = new DataView(bytes.buffer, bytes.byteOffset, 16);
    return { events: view.getFloat64(0, true), samples: view.getFloat64(8, true) };
  }

  /** Records `extent` as committed (opens the file on first use). */
  write(extent: JournalExtent): void {
    this.#fd ??= openSync(this.path, "w");
    this.#view.setFloat64(0, extent.events, true);
    this.#view.setFloat64(8, extent.samples, true);
    writeSync(this.#fd, this.#bytes, 0, 16, 0);
  }

  close(): void {
    if (this.#fd !== null) closeSync(this.#fd);
    this.#fd = null;
  }
}
