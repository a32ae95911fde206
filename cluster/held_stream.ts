/**
 * A streamed agent call that a replica holds or passes on from the rollout's owner: SSE
 * keep-alive comments while nothing has come (the rollout is moving between replicas, its
 * trainer is slow), then the answer's own events. When a passed-on stream breaks before any of
 * its events went out (the owner died while the turn waited: only comments had passed), the call
 * is routed again and the new owner's answer is streamed in its place, so the agent never sees
 * the owner's death. An answer that is not a stream (a refusal, the bound passed) arrives as the
 * protocol's in-stream error.
 *
 * @module
 */
import type { ErrorShape } from "../gateway/mod.ts";

const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

export function isEventStream(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
}

/** Whether SSE text carries anything but comments (lines that start with `:`), across chunks. */
class DataSeen {
  #partial = "";
  seen = false;

  add(text: string): void {
    if (this.seen) return;
    const lines = (this.#partial + text).split("\n");
    this.#partial = lines.pop()!;
    this.seen = lines.some((l) => l !== "" && !l.startsWith(":")) ||
      (this.#partial !== "" && !this.#partial.startsWith(":"));
  }
}

/** The message of an error response's JSON body, else its status. */
async function errorMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    return body?.error?.message ?? body?.message ?? text;
  } catch {
    return text || `HTTP ${res.status}`;
  }
}

/**
 * The stream of `first` (a response already there, or one still coming), `route` called again for
 * a passed-on stream that broke before its events.
 */
export function heldStream(o: {
  first: Promise<Response>;
  route(): Promise<Response>;
  errors: ErrorShape;
  keepAliveMs: number;
}): Response {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let closed = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (bytes: Uint8Array) => {
        if (!closed) controller.enqueue(bytes);
      };
      const text = (t: string) => write(encoder.encode(t));
      text(": rollgate\n\n");
      timer = setInterval(() => text(": keep-alive\n\n"), o.keepAliveMs);
      const run = async () => {
        let res = await o.first;
        for (;;) {
          if (!isEventStream(res)) {
            const events = o.errors.streamErrorEvents?.(res.status, await errorMessage(res)) ?? [];
            for (const e of events) {
              text((e.event ? `event: ${e.event}\n` : "") + `data: ${e.data}\n\n`);
            }
            return;
          }
          const data = new DataSeen();
          reader = res.body!.getReader();
          try {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return;
              data.add(decoder.decode(value, { stream: true }));
              write(value);
            }
          } catch (e) {
            if (closed) return;
            if (data.seen) throw e; // part of the answer went out: only the agent's retry helps
          }
          res = await o.route();
        }
      };
      run().then(
        () => {
          clearInterval(timer);
          if (!closed) {
            closed = true;
            controller.close();
          }
        },
        (e) => {
          clearInterval(timer);
          if (!closed) {
            closed = true;
            controller.error(e); // the connection is cut: the agent's retry mounts on the turn
          }
        },
      );
    },
    cancel() {
      closed = true;
      clearInterval(timer);
      reader?.cancel().catch(() => {});
    },
  });
  return new Response(body, { headers: SSE_HEADERS });
}
