/**
 * Server-sent events with keep-alive comments while the answer is being produced (the trainer
 * may take minutes; clients and proxies drop silent streams), and an in-stream error when
 * production fails after the 200 was sent.
 *
 * @module
 */
import type { SseEvent } from "../protocol.ts";

export const DEFAULT_KEEPALIVE_MS = 3000;

export function encodeSse(e: SseEvent): string {
  if (e.bare) return `${e.data}\n\n`;
  return (e.event ? `event: ${e.event}\n` : "") + `data: ${e.data}\n\n`;
}

export interface SseOptions {
  /**
   * The events: all at once, or as they arrive (relayed from an upstream stream), one by one or
   * in batches (each batch one write: a socket write per event costs a system call each).
   */
  produce(): Promise<readonly SseEvent[] | AsyncIterable<SseEvent | readonly SseEvent[]>>;
  onError(error: unknown): SseEvent[];
  keepAliveMs?: number;
  /**
   * Sent to keep a silent stream open instead of the `: keep-alive` comment, for clients that
   * cannot skip comments; no opening comment is sent either.
   */
  keepAlive?: SseEvent;
}

export function sseResponse(options: SseOptions): Response {
  const encoder = new TextEncoder();
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (text: string) => {
        if (!closed && text !== "") controller.enqueue(encoder.encode(text));
      };
      const keepAlive = options.keepAlive ? encodeSse(options.keepAlive) : ": keep-alive\n\n";
      if (!options.keepAlive) write(": rollgate\n\n");
      timer = setInterval(() => write(keepAlive), options.keepAliveMs ?? DEFAULT_KEEPALIVE_MS);
      const batch = (events: SseEvent | readonly SseEvent[]) =>
        write("data" in events ? encodeSse(events) : events.map(encodeSse).join(""));
      options.produce()
        .then(async (events) => {
          if (Array.isArray(events)) return batch(events);
          for await (const e of events) batch(e);
        })
        .catch((e) => batch(options.onError(e)))
        .finally(() => {
          clearInterval(timer);
          if (!closed) {
            closed = true;
            controller.close();
          }
        });
    },
    cancel() {
      // The client went away; the turn itself stays recorded and can be replayed on retry.
      closed = true;
      clearInterval(timer);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
    },
  });
}
