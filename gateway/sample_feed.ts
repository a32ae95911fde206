/**
 * `GET /api/samples/stream`: finished rollouts' samples as JSON Lines, pushed as rollouts
 * finish, for trainers that consume a stream instead of polling each rollout.
 *
 * @module
 */
import type { Sample } from "../trajectory/mod.ts";

export class SampleFeed {
  readonly #subscribers = new Set<(line: string) => void>();

  publish(samples: readonly Sample[]): void {
    for (const s of samples) {
      const line = JSON.stringify(s) + "\n";
      for (const send of this.#subscribers) send(line);
    }
  }

  /** A streaming response that stays open until the client disconnects. */
  response(): Response {
    const encoder = new TextEncoder();
    let send: (line: string) => void;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        send = (line) => controller.enqueue(encoder.encode(line));
        this.#subscribers.add(send);
      },
      cancel: () => {
        this.#subscribers.delete(send);
      },
    });
    return new Response(body, {
      headers: { "content-type": "application/x-ndjson", "cache-control": "no-cache" },
    });
  }
}
