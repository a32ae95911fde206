/**
 * Giving the system back the memory the native tokenizer freed.
 *
 * The Rust tokenizer allocates through glibc's malloc on its worker threads, and glibc keeps what
 * they free in per-thread arenas instead of returning it: after 1,000 rollouts × 32k tokens that
 * was ~117 MB of RSS holding nothing (issue 11's measurement). `malloc_trim(0)` returns it. It runs
 * as a non-blocking FFI call (on a blocking-pool thread, never on the event loop), at most one at
 * a time, once every {@link TRIM_EVERY_CHARS} characters tokenized; the encode that crosses the
 * mark waits for it, so no call outlives the work that caused it. Where there is no glibc or no
 * FFI permission it is a no-op.
 *
 * @example
 * ```ts
 * import { NativeMemoryTrim } from "./native_memory.ts";
 *
 * const trim = NativeMemoryTrim.shared();
 * await trim.afterEncoding(1_000); // counts; null until enough text went through
 * ```
 *
 * @module
 */

/** Characters tokenized between two trims: ~8 MB of text is ~2M ids' worth of native garbage. */
export const TRIM_EVERY_CHARS = 8 * 1024 * 1024;

type Trim = () => Promise<number>;

/** Loaded with the module, before any test case, so no test sees the library opened as its own. */
const MALLOC_TRIM = loadMallocTrim();

/**
 * One `malloc_trim(0)` now, off the event loop; false where it cannot run (no glibc, no FFI
 * permission). The gateway trims through {@link NativeMemoryTrim}; this is for measurements.
 */
export async function trimNativeMemory(): Promise<boolean> {
  if (MALLOC_TRIM === null) return false;
  await MALLOC_TRIM();
  return true;
}

/** `malloc_trim` from glibc, or null where it cannot be called. */
function loadMallocTrim(): Trim | null {
  if (Deno.build.os !== "linux") return null;
  try {
    if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return null;
    const libc = Deno.dlopen("libc.so.6", {
      malloc_trim: { parameters: ["usize"], result: "i32", nonblocking: true },
    });
    return () => libc.symbols.malloc_trim(0n);
  } catch {
    return null; // not glibc (musl, a static build): nothing to trim this way
  }
}

export class NativeMemoryTrim {
  static #shared?: NativeMemoryTrim;
  /** One per process: glibc's arenas are the process's, whichever tokenizer freed into them. */
  static shared(): NativeMemoryTrim {
    return NativeMemoryTrim.#shared ??= new NativeMemoryTrim(MALLOC_TRIM);
  }

  #chars = 0;
  #running: Promise<void> | null = null;
  /** Trims started. */
  trims = 0;

  constructor(private readonly trim: Trim | null, readonly everyChars = TRIM_EVERY_CHARS) {}

  /** Whether this process can trim at all. */
  get available(): boolean {
    return this.trim !== null;
  }

  /** Counts `chars` tokenized; once enough went through, the trim it started (null: none). */
  afterEncoding(chars: number): Promise<void> | null {
    this.#chars += chars;
    return this.#due();
  }

  /**
   * Counts bytes of large native buffers a request made and dropped (a trainer's routing rows:
   * its body, the decoded rows, SQLite's copy, issue 24; an agent's body, issue 33), which glibc
   * keeps the same way; they weigh as much as characters tokenized.
   */
  afterLargeBuffers(bytes: number): Promise<void> | null {
    this.#chars += bytes;
    return this.#due();
  }

  #due(): Promise<void> | null {
    if (this.#chars < this.everyChars || this.trim === null || this.#running) return null;
    this.#chars = 0;
    this.trims++;
    return this.#running = this.trim().then(() => {}, () => {}).finally(() => {
      this.#running = null;
    });
  }
}
