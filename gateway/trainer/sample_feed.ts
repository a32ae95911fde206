/**
 * `GET /api/samples/stream[?after=<cursor>]`: finished rollouts' samples as JSON Lines, each with
 * its `cursor`. Without `after` the stream starts with the next sample to finish (the
 * `x-rollgate-cursor` header says after which cursor); with it, every sample after that cursor is
 * replayed from the sample log first. A trainer that reconnects with the last cursor it read gets
 * every sample exactly once. A cursor past the newest sample logged is refused (409): the log it
 * came from is not this one (the gateway restarted on another, or an empty, journal), and going on
 * would skip every sample up to it.
 *
 * The head is written at once, whether a sample is there or not (the HTTP server flushes the head
 * of a stream: the client learns where its stream starts instead of waiting for the first
 * sample), and an idle stream gets an empty line every {@link KEEPALIVE_MS} so proxies and clients
 * keep it open; an empty line is no sample.
 *
 * Each subscriber reads the log itself, in cursor order; a publish only wakes it up. So no sample
 * can be skipped or sent twice however publishes and reconnects interleave.
 *
 * @module
 */
import { sampleJson, type SampleLog } from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";

/** Samples read from the log per step of a subscriber. */
const PAGE = 64;
/** An idle stream's keep-alive: an empty line this often. */
export const KEEPALIVE_MS = 15_000;

export class SampleFeed {
  readonly #wake = new Set<() => void>();

  constructor(readonly log: SampleLog) {}

  /** New samples are in the log: the subscribers read them. */
  wake(): void {
    for (const wake of [...this.#wake]) wake();
  }

  /** A streaming response that stays open until the client disconnects. */
  async response(after?: number, keepAliveMs = KEEPALIVE_MS): Promise<Response> {
    const [oldest, newest] = await Promise.all([this.log.oldest(), this.log.newest()]);
    if (after !== undefined && after + 1 < oldest) {
      throw new GatewayError(
        410,
        `samples after cursor ${after} are no longer kept: the oldest kept is ${oldest} (without the journal the gateway keeps only the latest samples)`,
      );
    }
    if (after !== undefined && after > newest) {
      throw new GatewayError(
        409,
        `cursor ${after} is ahead of the newest sample of this gateway's log (${newest}): it came from another log (the gateway restarted on another or an empty journal); samples up to it would be skipped. Reconnect with after=${newest} to read on from here${
          newest > 0 ? ", or after=0 for every sample kept" : ""
        }`,
      );
    }
    let cursor = after ?? newest;
    const encoder = new TextEncoder();
    let closed = false;
    let wake: (() => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        for (;;) {
          // Registered before reading, so a publish during the read is not missed.
          const woken = new Promise<void>((resolve) => {
            wake = resolve;
            this.#wake.add(resolve);
          });
          const page = await this.log.after(cursor, PAGE);
          if (closed) return;
          if (page.length > 0) {
            this.#wake.delete(wake!);
            // A built sample's typed arrays are written as JSON arrays (`sampleJson`), as everywhere.
            const lines = page.map((e) =>
              JSON.stringify({ cursor: e.cursor, ...sampleJson(e.sample) })
            );
            controller.enqueue(encoder.encode(lines.join("\n") + "\n"));
            cursor = page.at(-1)!.cursor;
            return;
          }
          let timer: ReturnType<typeof setTimeout> | undefined;
          const idle = await Promise.race([
            woken.then(() => false),
            new Promise<boolean>((r) => timer = setTimeout(() => r(true), keepAliveMs)),
          ]);
          clearTimeout(timer);
          this.#wake.delete(wake!);
          if (closed) return;
          if (idle) {
            controller.enqueue(encoder.encode("\n"));
            return;
          }
        }
      },
      cancel: () => {
        closed = true;
        if (wake) {
          this.#wake.delete(wake);
          wake();
        }
      },
    }, { highWaterMark: 0 });
    return new Response(body, {
      headers: {
        "content-type": "application/x-ndjson",
        "cache-control": "no-cache",
        // Where this stream starts: a client reconnecting with `after` set to it misses nothing.
        "x-rollgate-cursor": String(cursor),
      },
    });
  }
}
