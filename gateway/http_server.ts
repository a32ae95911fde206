/**
 * The gateway's HTTP/1.1 server, with an end to every wait a client can impose: the request head
 * must arrive within the header timeout, a request body may not stall longer than the body
 * timeout, and a kept-alive connection without a request is closed after the idle timeout. (A
 * slow or silent client would otherwise hold a socket and memory forever.) `Deno.serve` has no such
 * timeouts (denoland/deno#3515), so this serves through `node:http`, whose sockets give the
 * connection events the timeouts need, and hands each request to a fetch handler (the Hono app)
 * as a standard `Request` whose signal aborts when the client goes away.
 *
 * @example
 * ```ts
 * import { serveHttp } from "./http_server.ts";
 *
 * const server = await serveHttp(() => new Response("ok"), { hostname: "127.0.0.1", port: 0 });
 * await (await fetch(`http://127.0.0.1:${server.addr.port}/`)).text(); // "ok"
 * await server.shutdown();
 * ```
 *
 * @module
 */
import http from "node:http";
import type { Socket } from "node:net";
import { GatewayError } from "./gateway_error.ts";

export interface HttpTimeouts {
  /** From a connection's start to its first complete request head. */
  headerMs: number;
  /** Longest gap between two pieces of a request body (then 408 and the connection closes). */
  bodyIdleMs: number;
  /** A kept-alive connection with no request is closed after this long. */
  idleMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: Readonly<HttpTimeouts> = {
  headerMs: 30_000,
  bodyIdleMs: 30_000,
  idleMs: 120_000,
};

export interface HttpServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  timeouts?: Partial<HttpTimeouts>;
}

export interface HttpServer {
  addr: { hostname: string; port: number };
  /** Stops accepting, closes idle connections and resolves when the open requests are done. */
  shutdown(): Promise<void>;
}

/** What the handler learns about the connection besides the request (as `Deno.serve` gives). */
export interface ServeInfo {
  remoteAddr: Deno.NetAddr;
}

type FetchHandler = (request: Request, info: ServeInfo) => Response | Promise<Response>;

interface Connection {
  /** Requests whose response has not ended. */
  active: number;
  /** Closes the connection unless a request head arrives first. */
  timer?: ReturnType<typeof setTimeout>;
}

/** Serves `handler` until `shutdown`. */
export async function serveHttp(
  handler: FetchHandler,
  options: HttpServerOptions,
): Promise<HttpServer> {
  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...options.timeouts };
  const connections = new Map<Socket, Connection>();
  const expectRequest = (socket: Socket, ms: number) => {
    const conn = connections.get(socket);
    if (!conn) return;
    clearTimeout(conn.timer);
    conn.timer = setTimeout(() => socket.destroy(), ms);
  };

  const server = http.createServer((req, res) => {
    const conn = connections.get(req.socket);
    if (conn) {
      clearTimeout(conn.timer);
      conn.active++;
    }
    res.on("close", () => {
      if (!conn) return;
      conn.active--;
      if (conn.active === 0) expectRequest(req.socket, timeouts.idleMs);
    });
    void respond(handler, req, res, options.hostname, timeouts.bodyIdleMs);
  });
  // The timers below replace node's own (which Deno does not all implement).
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.on("connection", (socket: Socket) => {
    socket.setNoDelay(true);
    connections.set(socket, { active: 0 });
    expectRequest(socket, timeouts.headerMs);
    socket.on("close", () => {
      clearTimeout(connections.get(socket)?.timer);
      connections.delete(socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return {
    addr: { hostname: options.hostname, port },
    shutdown() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const [socket, conn] of connections) if (conn.active === 0) socket.destroy();
      return closed;
    },
  };
}

/** Runs one request through the handler and writes its response, streaming. */
async function respond(
  handler: FetchHandler,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  hostname: string,
  bodyIdleMs: number,
): Promise<void> {
  const gone = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  let response: Response;
  try {
    const remoteAddr: Deno.NetAddr = {
      transport: "tcp",
      hostname: req.socket.remoteAddress ?? "",
      port: req.socket.remotePort ?? 0,
    };
    response = await handler(toRequest(req, res, hostname, bodyIdleMs, gone.signal), {
      remoteAddr,
    });
  } catch (e) {
    console.error("rollgate: unhandled error serving a request:", e);
    response = Response.json({ error: { type: "server_error", message: String(e) } }, {
      status: 500,
    });
  }
  if (gone.signal.aborted) {
    await response.body?.cancel();
    return;
  }
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = key === "set-cookie" ? response.headers.getSetCookie() : value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const stop = () => void reader.cancel().catch(() => {});
  res.on("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((r) => res.once("drain", r));
      if (gone.signal.aborted) return;
    }
    res.end();
  } catch (e) {
    // The body failed after the head was sent: all that is left is to cut the connection.
    if (!gone.signal.aborted) console.error("rollgate: response body failed:", e);
    res.destroy();
  } finally {
    res.off("close", stop);
  }
}

function toRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  hostname: string,
  bodyIdleMs: number,
  signal: AbortSignal,
): Request {
  // Pairs, not a `Headers`: the Request converts a `Headers` through its sorting iterator, which
  // cost ~12 kB of garbage and 10 µs a request (issue 20's allocation profile).
  const headers: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
  }
  const url = `http://${req.headers.host ?? hostname}${req.url ?? "/"}`;
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(url, {
    method,
    headers,
    signal,
    body: hasBody ? bodyStream(req, res, bodyIdleMs) : null,
    // @ts-ignore: `duplex` is required for a streamed request body and missing from the types.
    duplex: "half",
  });
}

/** The request body as a stream that errors with a 408 when the client stalls. */
function bodyStream(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  idleMs: number,
): ReadableStream<Uint8Array> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stalled = () => {};
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(stalled, idleMs);
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stalled = () => {
        // What is left of the body will never be read: the connection cannot be reused.
        res.shouldKeepAlive = false;
        req.pause();
        controller.error(
          new GatewayError(
            408,
            `the request body stalled: nothing arrived for ${idleMs / 1000} s`,
          ),
        );
      };
      arm();
      req.on("data", (chunk: Uint8Array) => {
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 1) > 0) return arm();
        // The reader is behind, not the client: no clock until it asks for more.
        clearTimeout(timer);
        req.pause();
      });
      req.on("end", () => {
        clearTimeout(timer);
        try {
          controller.close();
        } catch { /* already errored */ }
      });
      req.on("error", (e) => {
        clearTimeout(timer);
        try {
          controller.error(e);
        } catch { /* already errored */ }
      });
      req.on("close", () => clearTimeout(timer));
    },
    pull() {
      if (!req.isPaused()) return;
      arm();
      req.resume();
    },
    cancel() {
      clearTimeout(timer);
      req.resume(); // drain what remains so the connection can carry the response
    },
  }, { highWaterMark: 4 });
}
