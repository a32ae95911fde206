/**
 * Pause and drain for weight syncs. While paused, a new generation is held before it reaches any
 * backend (it waits; it is not refused); generations already inside a backend finish normally and
 * are counted as in flight, so a trainer can pause, wait for `inFlight` to reach 0, swap weights,
 * and resume. A held generation whose client disconnects leaves the queue.
 *
 * A resume may name the weight version now in force: generations sent to a backend from then on
 * (and requests a trainer acknowledges) are stamped with it as the version their first token was
 * sampled under, unless the producer says better (an engine's per-token spans, a trainer's first
 * appended chunk or its `ack`).
 *
 * @module
 */
import { abortError } from "./backend.ts";

const CLIENT_GONE = "the client disconnected while paused";

export interface PauseStatus {
  paused: boolean;
  /** The weight version the last resume named, when one did. */
  weight_version?: string | number;
  /** Generations inside a backend now. */
  in_flight: number;
  /** Generations waiting for a resume. */
  held: number;
}

interface Held {
  resolve(): void;
}

export class PauseGate {
  #paused = false;
  #inFlight = 0;
  #version?: string | number;
  readonly #held = new Set<Held>();

  get paused(): boolean {
    return this.#paused;
  }

  /** The weight version in force (named by the last resume that named one). */
  get version(): string | number | undefined {
    return this.#version;
  }

  status(): PauseStatus {
    return {
      paused: this.#paused,
      ...(this.#version !== undefined ? { weight_version: this.#version } : {}),
      in_flight: this.#inFlight,
      held: this.#held.size,
    };
  }

  pause(): void {
    this.#paused = true;
  }

  /** Releases every held generation, in arrival order; `version`: the weights now in force. */
  resume(version?: string | number): void {
    if (version !== undefined) this.#version = version;
    this.#paused = false;
    const held = [...this.#held];
    this.#held.clear();
    for (const h of held) h.resolve();
  }

  /**
   * Waits while paused, then counts one generation in flight. Returns the release function the
   * caller runs when the backend answered (or failed). Rejects with a `GenerationError` when
   * `signal` aborts while held.
   */
  async enter(signal?: AbortSignal): Promise<() => void> {
    while (this.#paused) {
      if (signal?.aborted) throw abortError(signal, CLIENT_GONE);
      await new Promise<void>((resolve, reject) => {
        const entry: Held = {
          resolve: () => {
            signal?.removeEventListener("abort", gone);
            resolve();
          },
        };
        const gone = () => {
          this.#held.delete(entry);
          reject(abortError(signal!, CLIENT_GONE));
        };
        signal?.addEventListener("abort", gone, { once: true });
        this.#held.add(entry);
      });
    }
    this.#inFlight++;
    let released = false;
    return () => {
      if (!released) {
        released = true;
        this.#inFlight--;
      }
    };
  }
}
