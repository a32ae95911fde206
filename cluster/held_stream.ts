/**
 * A streamed agent call that a replica holds or passes on from the rollout's owner. Its head is
 * written with the first bytes of the answer (or once the head hold is over, then SSE keep-alive
 * comments until the answer comes): a head written is an answer this replica must deliver,
 * because an agent's SDK retries a failed request but not a broken stream. When a passed-on
 * stream breaks before any of its events came (the owner died while the turn waited: only
 * comments had passed), the call is routed again and the new owner's answer is streamed in its
 * place, so the agent never sees the owner's death. An answer that is not a stream (a refusal,
 * the bound passed) is answered as it is while no head was written, else as the protocol's
 * in-stream error.
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
 * The answer to a streamed call: `first` (a response already there, or one still coming), `route`
 * called again for a passed-on stream that broke before its events. Resolves once its head can be
 * written: with the answer's first bytes, a response that is no stream, or after `holdMs`.
 */
export function heldStream(o: {
  first: Promise<Response>;
  route(): Promise<Response>;
  errors: ErrorShape;
  keepAliveMs: number;
  /** How long the head may still wait for the answer. */
  holdMs: number;
}): Promise<Response> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let headed!: (r: Response) => void;
  const head = new Promise<Response>((r) => headed = r);
  let headWritten = false;
  /** The answer was no stream and went out as it is. */
  let plain = false;
  const stream = () => {
    if (headWritten || plain) return;
    headWritten = true;
    keepAlive = setInterval(() => write(encoder.encode(": keep-alive\n\n")), o.keepAliveMs);
    headed(new Response(body, { headers: { ...SSE_HEADERS, "x-rollgate-held": "1" } }));
  };
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      closed = true;
      clearInterval(keepAlive);
      reader?.cancel().catch(() => {});
    },
  });
  const write = (bytes: Uint8Array) => {
    if (!closed) controller.enqueue(bytes);
  };
  const hold = setTimeout(() => {
    write(encoder.encode(": rollgate\n\n"));
    stream();
  }, o.holdMs);
  const run = async () => {
    let res = await o.first;
    for (;;) {
      if (!isEventStream(res)) {
        if (!headWritten) { // no head yet: the refusal as it is
          plain = true;
          return headed(res);
        }
        const events = o.errors.streamErrorEvents?.(res.status, await errorMessage(res)) ?? [];
        for (const e of events) {
          write(encoder.encode((e.event ? `event: ${e.event}\n` : "") + `data: ${e.data}\n\n`));
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
          if (data.seen) stream(); // the answer is here: the head goes with it
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
      stream();
      if (!closed) {
        closed = true;
        controller.close();
      }
    },
    (e) => {
      const why = `${(e as Error)?.message ?? e}`;
      if (!headWritten) {
        // Nothing was written: a 502 the agent's SDK retries.
        return headed(
          Response.json(o.errors.errorBody(502, `the answer broke on its way: ${why}; retry`), {
            status: 502,
          }),
        );
      }
      console.error(`rollgate: a held stream was cut: ${why}`);
      if (!closed) {
        closed = true;
        controller.error(e); // the connection is cut: the agent's retry mounts on the turn
      }
    },
  ).finally(() => {
    clearTimeout(hold);
    clearInterval(keepAlive);
  });
  return head;
}
