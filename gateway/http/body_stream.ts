/**
 * A `node:http` request body, read one of two ways: as a web `ReadableStream` (what a fetch
 * `Request` carries), or whole into one buffer with nothing in between (`bytes`, what the JSON
 * readers take: a 600 kB agent history is copied once, not through a stream's queue and a
 * collector). Either way there is an end to every way a client can hold it: a gap between two
 * pieces longer than the idle timeout, or a whole body slower than the body deadline, fails the
 * read with a 408 and closes the connection. Nothing a client sends, or how it stops, can make
 * this throw outside a handler: once the read is cancelled (a reader that stopped at a size cap),
 * failed or answered, later pieces are discarded.
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
  /** The body as a stream; it starts reading when first read. */
  stream: ReadableStream<Uint8Array>;
  /**
   * The whole body in one buffer (a 413 past `maxBytes`), read without a stream; only one of
   * this and `stream` may read the body.
   */
  bytes(maxBytes: number): Promise<Uint8Array>;
  /**
   * The handler has its response: call before writing it. A body not fully received by then is
   * never read: the response closes the connection.
   */
  answered(): void;
}

/** Where the pieces go: the stream's queue, or one buffer. */
interface Sink {
  /** Takes a piece; false when the reader is behind (the body pauses until `more`). */
  piece(chunk: Uint8Array): boolean;
  end(): void;
  fail(e: Error): void;
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

/** The one-buffer reader of each request the server made (see {@link directBody}). */
const direct = new WeakMap<Request, RequestBody["bytes"]>();

/** `request` is read by `body` (its `bytes` serve {@link directBody}). */
export function servedWith(request: Request, body: RequestBody): Request {
  direct.set(request, body.bytes);
  return request;
}

/** How to read `request`'s body whole without its stream, when the server made it; else undefined. */
export function directBody(request: Request): RequestBody["bytes"] | undefined {
  return direct.get(request);
}

/**
 * Frees `bytes`' memory now rather than at the next major GC: its buffer is detached (every view
 * of it reads as empty after). Only a view of a whole, detachable buffer (what the server reads a
 * body into, and each piece node hands it); anything else is left to the GC.
 */
export function freeBuffer(bytes: Uint8Array): void {
  const buffer = bytes.buffer;
  if (!(buffer instanceof ArrayBuffer) || bytes.byteLength !== buffer.byteLength) return;
  try {
    buffer.transfer(0);
  } catch {
    // not detachable (a buffer its owner pinned): the GC frees it
  }
}

function tooLarge(maxBytes: number): GatewayError {
  return new GatewayError(413, `request body exceeds the gateway's limit of ${maxBytes} bytes`);
}

/** Wraps `req`'s body; the deadline runs from now, the idle clock once it is read. */
export function requestBody(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  timeouts: BodyTimeouts,
): RequestBody {
  let sink: Sink | undefined;
  /** Pieces still go to the sink; false once it is cancelled, failed, ended or answered. */
  let open = true;
  /** Why the body can no longer be read, for a reader that comes after. */
  let failure: Error | undefined;
  let idle: ReturnType<typeof setTimeout> | undefined;
  /** When the last piece came (the idle clock's start): `performance.now()`. */
  let lastPiece = 0;
  const stopIdle = () => {
    clearTimeout(idle);
    idle = undefined;
  };
  const closeConnection = () => {
    res.shouldKeepAlive = false;
    // The response is already out: nothing else will end the connection.
    if (res.headersSent) req.socket.destroy();
  };
  /** Stops feeding the sink; what still arrives is read and dropped, so the socket flows. */
  const detach = () => {
    open = false;
    stopIdle();
    req.resume();
  };
  const fail = (e: Error) => {
    if (open) {
      detach();
      failure = e;
      sink?.fail(e);
    }
  };
  const stall = (message: string) => {
    fail(new GatewayError(408, message));
    closeConnection();
  };
  /** Due when the idle clock may have run out: it has if no piece came since. */
  const idleDue = () => {
    const quiet = performance.now() - lastPiece;
    if (quiet < timeouts.bodyIdleMs) {
      idle = setTimeout(idleDue, timeouts.bodyIdleMs - quiet);
      return;
    }
    idle = undefined;
    stall(`the request body stalled: nothing arrived for ${timeouts.bodyIdleMs / 1000} s`);
  };
  // A piece restarts the idle clock by moving its start: one timer per body, not one per piece
  // (a 600 kB history arrives in ten 64 kB pieces, each a timer made and cleared).
  const arm = () => {
    lastPiece = performance.now();
    idle ??= setTimeout(idleDue, timeouts.bodyIdleMs);
  };
  const deadline = setTimeout(
    () => stall(`the request body took longer than ${timeouts.bodyMs / 1000} s`),
    timeouts.bodyMs,
  );
  const done = () => {
    stopIdle();
    clearTimeout(deadline);
  };
  req.on("end", done);
  req.on("close", done);
  /** Starts feeding `to`: the body's one reader. */
  const attach = (to: Sink) => {
    if (sink) throw new GatewayError(400, "the request body was read twice");
    sink = to;
    if (!open) return to.fail(failure ?? new GatewayError(400, "the request body is gone"));
    arm();
    req.on("data", (chunk: Uint8Array) => {
      if (!open) return;
      if (to.piece(chunk)) return arm();
      // The reader is behind, not the client: no idle clock until it asks for more.
      stopIdle();
      req.pause();
    });
    req.on("end", () => {
      if (!open) return;
      open = false;
      to.end();
    });
    req.on("error", (e) => fail(e));
  };
  /** The reader wants more after falling behind. */
  const more = () => {
    if (!open || !req.isPaused()) return;
    arm();
    req.resume();
  };

  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sink) return more();
      attach({
        piece(chunk) {
          try {
            controller.enqueue(chunk);
          } catch {
            detach(); // the stream ended under us: drop the rest
            return true;
          }
          return (controller.desiredSize ?? 1) > 0;
        },
        end: () => controller.close(),
        fail: (e) => controller.error(e),
      });
    },
    cancel() {
      // A reader stopped early (a size cap): the rest is never read, the connection closes.
      detach();
      res.shouldKeepAlive = false;
    },
  }, { highWaterMark: 0 });

  const bytes = (maxBytes: number) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const declared = Number(req.headers["content-length"] ?? NaN);
      // A declared length is what node reads, no more: one buffer of that size.
      let buffer = new Uint8Array(Number.isFinite(declared) && declared <= maxBytes ? declared : 0);
      let size = 0;
      attach({
        piece(chunk) {
          if (size + chunk.byteLength > maxBytes) {
            fail(tooLarge(maxBytes));
            res.shouldKeepAlive = false;
            return true;
          }
          if (size + chunk.byteLength > buffer.byteLength) {
            const grown = new Uint8Array(Math.max(size + chunk.byteLength, buffer.byteLength * 2));
            grown.set(buffer.subarray(0, size));
            buffer = grown;
          }
          buffer.set(chunk, size);
          size += chunk.byteLength;
          // The piece is copied and nobody else has it (this is the body's only reader): its
          // memory goes now, not at the next major GC.
          freeBuffer(chunk);
          return true;
        },
        end: () => resolve(size === buffer.byteLength ? buffer : buffer.subarray(0, size)),
        fail: reject,
      });
    });

  return {
    stream,
    bytes,
    answered() {
      done(); // the body's clocks end with the handler: the connection's own take over
      if (req.complete) return;
      fail(new GatewayError(400, "the request was answered before its body"));
      res.shouldKeepAlive = false;
      lingerOnClose(req.socket);
    },
  };
}
