/**
 * A `node:http` request body as a web `ReadableStream`, with an end to every way a client can
 * hold it: a gap between two pieces longer than the idle timeout, or a whole body slower than the
 * body deadline, errors the stream with a 408 and closes the connection. Nothing a client sends,
 * or how it stops, can make this throw outside a handler: once the stream is cancelled (a reader
 * that stopped at a size cap), errored or answered, later pieces are discarded, never enqueued.
 *
 * A handler that answers before the body is in (a 401, a 413 from `content-length`, a 413 past a
 * cap) leaves the rest unread: the connection is then closed after the answer (`Connection:
 * close`), so no client waits on a body nobody reads, and no server reads one it will discard.
 *
 * @module
 */
import type http from "node:http";
import type { Socket } from "node:net";
import { GatewayError } from "../gateway_error.ts";

export interface BodyTimeouts {
  /** Longest gap between two pieces of a body. */
  bodyIdleMs: number;
  /** Longest a whole body may take, from its request head on. */
  bodyMs: number;
}

/** After an early answer, how long a connection may linger before it is cut for good. */
const LINGER_MS = 2_000;

export interface RequestBody {
  stream: ReadableStream<Uint8Array>;
  /**
   * The handler has its response: call before writing it. A body not fully received by then is
   * never read: the response closes the connection.
   */
  answered(): void;
}

/**
 * Closes `socket` after its answer the lingering way: the answer and a FIN go out, what the client
 * still sends is read and dropped for up to {@link LINGER_MS}, then the socket is cut. (node closes
 * at once, and a client still sending gets a reset that can destroy the answer it had not read.)
 */
function lingerOnClose(socket: Socket): void {
  const closing = socket as Socket & { destroySoon?: () => void };
  closing.destroySoon = () => {
    socket.end();
    const cut = setTimeout(() => socket.destroy(), LINGER_MS);
    socket.once("close", () => clearTimeout(cut));
  };
}

/** Wraps `req`'s body; the timers run from now. */
export function requestBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  timeouts: BodyTimeouts,
): RequestBody {
  /** The stream takes pieces; false once it is cancelled, errored, closed or answered. */
  let open = true;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const closeConnection = () => {
    res.shouldKeepAlive = false;
    // The response is already out: nothing else will end the connection.
    if (res.headersSent) req.socket.destroy();
  };
  /** Stops feeding the stream; what still arrives is read and dropped, so the socket flows. */
  const detach = () => {
    open = false;
    clearTimeout(idle);
    req.resume();
  };
  const fail = (message: string) => {
    if (open) {
      detach();
      controller.error(new GatewayError(408, message));
    }
    closeConnection();
  };
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(
      () => fail(`the request body stalled: nothing arrived for ${timeouts.bodyIdleMs / 1000} s`),
      timeouts.bodyIdleMs,
    );
  };
  const deadline = setTimeout(
    () => fail(`the request body took longer than ${timeouts.bodyMs / 1000} s`),
    timeouts.bodyMs,
  );
  const done = () => {
    clearTimeout(idle);
    clearTimeout(deadline);
  };
  req.on("end", done);
  req.on("close", done);
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      arm();
      req.on("data", (chunk: Uint8Array) => {
        if (!open) return;
        try {
          controller.enqueue(chunk);
        } catch {
          detach(); // the stream ended under us: drop the rest
          return;
        }
        if ((controller.desiredSize ?? 1) > 0) return arm();
        // The reader is behind, not the client: no idle clock until it asks for more.
        clearTimeout(idle);
        req.pause();
      });
      req.on("end", () => {
        if (!open) return;
        open = false;
        controller.close();
      });
      req.on("error", (e) => {
        if (!open) return;
        detach();
        controller.error(e);
      });
    },
    pull() {
      if (!open || !req.isPaused()) return;
      arm();
      req.resume();
    },
    cancel() {
      // A reader stopped early (a size cap): the rest is never read, the connection closes.
      detach();
      res.shouldKeepAlive = false;
    },
  }, { highWaterMark: 4 });
  return {
    stream,
    answered() {
      done(); // the body's clocks end with the handler: the connection's own take over
      if (req.complete) return;
      if (open) {
        detach();
        controller.error(new GatewayError(400, "the request was answered before its body"));
      }
      res.shouldKeepAlive = false;
      lingerOnClose(req.socket);
    },
  };
}
