/**
 * One line per request for operators: time, client address, method, path, status and the time to
 * the response's headers (a streamed answer keeps flowing after that). Never the query, headers
 * or body: tokens and conversations stay out of logs.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";

/** The fields of one access-log line. */
export interface AccessRecord {
  time: Date;
  remote: string;
  method: string;
  path: string;
  status: number;
  ms: number;
}

/**
 * The line written for a request.
 *
 * @example
 * ```ts
 * accessLine({
 *   time: new Date(0), remote: "10.0.0.7", method: "POST", path: "/api/rollouts", status: 201, ms: 2.46,
 * }); // "1970-01-01T00:00:00.000Z 10.0.0.7 POST /api/rollouts 201 2.5ms"
 * ```
 */
export function accessLine(r: AccessRecord): string {
  return `${r.time.toISOString()} ${r.remote} ${r.method} ${r.path} ${r.status} ${
    r.ms.toFixed(1)
  }ms`;
}

/** The peer's address from Deno's serve info (`c.env`), when the server gave one. */
function remoteOf(env: unknown): string {
  const addr = (env as { remoteAddr?: Deno.Addr } | undefined)?.remoteAddr;
  if (addr && "hostname" in addr) return addr.hostname;
  if (addr && addr.transport === "unix") return "unix";
  return "-";
}

/**
 * Hono middleware writing one `accessLine` per request to `write`.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * const app = new Hono();
 * app.use("*", accessLog((line) => console.log(line)));
 * ```
 */
export function accessLog(write: (line: string) => void): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      write(accessLine({
        time: new Date(),
        remote: remoteOf(c.env),
        method: c.req.method,
        path: new URL(c.req.url).pathname,
        status: c.res.status,
        ms: performance.now() - started,
      }));
    }
  };
}
