/**
 * The gateway's HTTP/1.1 server, with an end to every wait a client can impose: the request head
 * must arrive within the header timeout, a request body may not stall longer than the body idle
 * timeout nor take longer than the body deadline (`body_stream.ts`), a kept-alive connection
 * without a request is closed after the idle timeout, and the open connections are capped in
 * all and per remote address. (A slow, silent or numerous client would otherwise hold sockets
 * and memory forever.) The caps know a balancer: see `connection_caps.ts`. A head node cannot parse gets a JSON 400 or 431. `Deno.serve` has no such
 * timeouts (denoland/deno#3515), so this serves through `node:http`, whose sockets give the
 * connection events the timeouts need, and hands each request to a fetch handler (the Hono app)
 * as a standard `Request` whose signal aborts when the client goes away. The JSON readers take a
 * body into one buffer straight from node's pieces, each piece freed once copied (`body_stream.ts`).
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
import { type BodyTimeouts, type RequestBody, requestBody, servedWith } from "./body_stream.ts";
import {
  type Admission,
  ConnectionCaps,
  type ConnectionLimits,
  DEFAULT_CONNECTION_LIMITS,
  isProbe,
} from "./connection_caps.ts";

export type { ConnectionLimits };

export interface HttpTimeouts extends BodyTimeouts {
  /** From a connection's start to its first complete request head. */
  headerMs: number;
  /** A kept-alive connection with no request is closed after this long. */
  idleMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: Readonly<HttpTimeouts> = {
  headerMs: 30_000,
  bodyIdleMs: 30_000,
  bodyMs: 120_000,
  idleMs: 120_000,
};

export interface HttpServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  timeouts?: Partial<HttpTimeouts>;
  connections?: Partial<ConnectionLimits>;
}

export interface HttpServer {
  addr: { hostname: string; port: number };
  /** Stops accepting, closes idle connections and resolves when the open requests are done. */
  shutdown(): Promise<void>;
}

/** Responses whose first byte may be minutes away: their head is written at once. */
const STREAMED = /^application\/x-ndjson/;

/** What the handler learns about the connection besides the request (as `Deno.serve` gives). */
export interface ServeInfo {
  remoteAddr: Deno.NetAddr;
}

type FetchHandler = (request: Request, info: ServeInfo) => Response | Promise<Response>;

interface Connection {
  /** Requests whose response has not ended. */
  active: number;
  /** Served, or past a cap and answering health checks only. */
  admission: Admission;
  /** Closes the connection unless a request head arrives first. */
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * An answer written straight to a socket, before or instead of a parsed request (a refused
 * connection, a malformed or oversized head): JSON in the shape every agent protocol reads
 * (`error.message`; Anthropic's `type: "error"`).
 */
function rawAnswer(status: number, reason: string, type: string, message: string): string {
  const body = JSON.stringify({ type: "error", error: { type, message } });
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\n` +
    `content-length: ${
      new TextEncoder().encode(body).byteLength
    }\r\nconnection: close\r\n\r\n${body}`;
}

/** Serves `handler` until `shutdown`. */
export async function serveHttp(
  handler: FetchHandler,
  options: HttpServerOptions,
): Promise<HttpServer> {
  const timeouts = { ...DEFAULT_HTTP_TIMEOUTS, ...options.timeouts };
  const caps = new ConnectionCaps({ ...DEFAULT_CONNECTION_LIMITS, ...options.connections });
  const connections = new Map<Socket, Connection>();
  const expectRequest = (socket: Socket, ms: number) => {
    const conn = connections.get(socket);
    if (!conn) return;
    clearTimeout(conn.timer);
    conn.timer = setTimeout(() => socket.destroy(), ms);
  };

  const overloaded = (res: http.ServerResponse, why: string) => {
    res.shouldKeepAlive = false;
    const body = JSON.stringify({
      type: "error",
      error: {
        type: "overloaded_error",
        message: `too many open connections: ${why}; retry later`,
      },
    });
    res.writeHead(503, {
      "content-type": "application/json",
      "content-length": new TextEncoder().encode(body).byteLength,
      connection: "close",
    }).end(body);
  };
  const server = http.createServer((req, res) => {
    const conn = connections.get(req.socket);
    if (!conn) return; // a refused connection: its 503 is written, the socket closing
    clearTimeout(conn.timer);
    conn.active++;
    const address = req.socket.remoteAddress ?? "";
    const client = caps.clientOf(address, req.headers["x-forwarded-for"] as string | undefined);
    // Behind a trusted proxy each client is counted by its requests (its connections are the proxy's).
    const counted = caps.trusted(address) ? caps.enter(client) : undefined;
    res.on("close", () => {
      conn.active--;
      if (counted && "release" in counted) counted.release();
      if (conn.active === 0) expectRequest(req.socket, timeouts.idleMs);
    });
    const probe = isProbe(req.url ?? "");
    if (conn.admission.kind === "probe" && !probe) return overloaded(res, conn.admission.why);
    if (counted && "refused" in counted && !probe) return overloaded(res, counted.refused);
    void respond(handler, req, res, options.hostname, timeouts, client);
  });
  // The timers below replace node's own (which Deno does not all implement).
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "";
    const admission = caps.admit(address);
    if (admission.kind === "refused") {
      socket.end(
        rawAnswer(
          503,
          "Service Unavailable",
          "overloaded_error",
          `too many open connections: ${admission.why}; retry later`,
        ),
      );
      setTimeout(() => socket.destroy(), 1_000);
      return;
    }
    socket.setNoDelay(true);
    connections.set(socket, { active: 0, admission });
    expectRequest(socket, timeouts.headerMs);
    socket.on("close", () => {
      clearTimeout(connections.get(socket)?.timer);
      connections.delete(socket);
      caps.leave(address, admission);
    });
  });
  // A head node cannot parse (too large, malformed): an answer the client can read, not silence.
  server.on("clientError", (e: Error & { code?: string }, socket: Socket) => {
    if (socket.writable && !socket.writableEnded) {
      socket.end(
        e.code === "HPE_HEADER_OVERFLOW"
          ? rawAnswer(
            431,
            "Request Header Fields Too Large",
            "invalid_request_error",
            "the request head is larger than the gateway accepts (16 KiB of headers)",
          )
          : rawAnswer(
            400,
            "Bad Request",
            "invalid_request_error",
            `malformed HTTP request: ${e.message}`,
          ),
      );
    }
    setTimeout(() => socket.destroy(), 1_000);
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

/**
 * JSON answers (every API answer) are read whole and written with their head in one write; any
 * other body (events, sample feeds, pages, a handler's own stream) is written as it is produced.
 */
const WHOLE = /^application\/json\b/i;

/** Runs one request through the handler and writes its response, streaming. */
async function respond(
  handler: FetchHandler,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  hostname: string,
  timeouts: BodyTimeouts,
  client: string,
): Promise<void> {
  const gone = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? null : requestBody(req, res, timeouts);
  let response: Response;
  try {
    // Behind a trusted proxy: the client it names.
    const remoteAddr: Deno.NetAddr = {
      transport: "tcp",
      hostname: client,
      port: client === req.socket.remoteAddress ? req.socket.remotePort ?? 0 : 0,
    };
    response = await handler(toRequest(req, hostname, body, gone.signal), {
      remoteAddr,
    });
  } catch (e) {
    console.error("rollgate: unhandled error serving a request:", e);
    response = Response.json({ error: { type: "server_error", message: String(e) } }, {
      status: 500,
    });
  }
  body?.answered();
  if (gone.signal.aborted) {
    await response.body?.cancel();
    return;
  }
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, key) => {
    headers[key] = key === "set-cookie" ? response.headers.getSetCookie() : value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers);
    res.end();
    return;
  }
  if (WHOLE.test(response.headers.get("content-type") ?? "")) {
    // A whole answer (JSON, a page): read at once, written with its head in one write.
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await response.arrayBuffer());
    } catch (e) {
      console.error("rollgate: response body failed:", e);
      return void res.destroy();
    }
    if (gone.signal.aborted) return;
    headers["content-length"] = String(bytes.byteLength);
    res.writeHead(response.status, headers);
    res.end(bytes);
    return;
  }
  res.writeHead(response.status, headers);
  // A stream's head goes out now (node holds it for the first write, which may be minutes away).
  if (STREAMED.test(response.headers.get("content-type") ?? "")) res.flushHeaders();
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
  hostname: string,
  body: RequestBody | null,
  signal: AbortSignal,
): Request {
  // Pairs, not a `Headers`: the Request converts a `Headers` through its sorting iterator, which
  // cost ~12 kB of garbage and 10 µs a request (issue 20's allocation profile).
  const headers: [string, string][] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
  }
  const url = `http://${req.headers.host ?? hostname}${req.url ?? "/"}`;
  const request = new Request(url, {
    method: req.method ?? "GET",
    headers,
    signal,
    body: body?.stream ?? null,
    // @ts-ignore: `duplex` is required for a streamed request body and missing from the types.
    duplex: "half",
  });
  return body ? servedWith(request, body) : request;
}
