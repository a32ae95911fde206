/**
 * Refusing requests a web browser makes on behalf of another site. Agents, trainers and scripts
 * never send `Origin` or `Sec-Fetch-Site`; a page on any other site does, and without this guard
 * it could create rollouts or pause the gateway with a "simple" cross-origin POST that needs no
 * preflight. A loopback listener also checks `Host`, so a DNS-rebound name (a page whose own name
 * resolves to 127.0.0.1, for which `Origin` and `Host` agree) is refused as well.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { isLoopbackHost } from "./bind_address.ts";

export interface BrowserGuardOptions {
  /**
   * Check the `Host` header as a loopback listener must: only loopback names (and the public
   * URL's host) are accepted. Off for listeners other machines reach.
   */
  loopbackOnly?: boolean;
  /** The gateway's public URL: requests from its origin and to its host are its own. */
  publicUrl?: string;
}

function hostOf(value: string): string | null {
  try {
    return new URL(value.includes("://") ? value : `http://${value}`).host.toLowerCase();
  } catch {
    return null;
  }
}

function hostnameOf(host: string): string {
  return new URL(`http://${host}`).hostname;
}

/**
 * Why a request must be refused, or null when it may pass.
 *
 * @example
 * ```ts
 * const h = (o: Record<string, string>) => new Headers(o);
 * browserRefusal(h({ host: "127.0.0.1:7860" }), {}); // null: a script or an agent
 * browserRefusal(h({ host: "127.0.0.1:7860", origin: "https://evil.example" }), {}); // a reason
 * ```
 */
export function browserRefusal(headers: Headers, o: BrowserGuardOptions): string | null {
  const host = hostOf(headers.get("host") ?? "");
  const publicHost = o.publicUrl ? hostOf(o.publicUrl) : null;
  if (o.loopbackOnly && host !== null) {
    const name = hostnameOf(host);
    if (!isLoopbackHost(name) && name !== (publicHost && hostnameOf(publicHost))) {
      return `Host ${host} is not this gateway's: it listens on loopback only ` +
        `(set --public-url when a proxy forwards another name to it)`;
    }
  }
  const site = headers.get("sec-fetch-site");
  if (site === "cross-site" || site === "same-site") {
    return `cross-origin browser requests are refused (Sec-Fetch-Site: ${site})`;
  }
  const origin = headers.get("origin");
  if (origin !== null) {
    const from = origin === "null" ? null : hostOf(origin);
    if (from === null || (from !== host && from !== publicHost)) {
      return `cross-origin browser requests are refused (Origin: ${origin})`;
    }
  }
  return null;
}

/**
 * Hono middleware answering 403 to what `browserRefusal` refuses.
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * const app = new Hono();
 * app.use("*", browserGuard({ loopbackOnly: true }));
 * ```
 */
export function browserGuard(o: BrowserGuardOptions): MiddlewareHandler {
  return async (c, next) => {
    const reason = browserRefusal(c.req.raw.headers, o);
    if (reason !== null) {
      // Both agent protocols read `error.type` and `error.message` from this shape.
      return c.json({ type: "error", error: { type: "permission_error", message: reason } }, 403);
    }
    await next();
  };
}

/** Methods whose body the trainer API reads. */
const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Why a trainer-API request's body must be refused (it is not declared JSON), or null. A
 * bodiless request passes; a body needs `Content-Type: application/json` (or `…+json`), which a
 * browser cannot send cross-origin without a preflight that this gateway never grants.
 *
 * @example
 * ```ts
 * const req = (type: string) =>
 *   new Request("http://x/api/rollouts", { method: "POST", body: "{}", headers: { "content-type": type } });
 * jsonBodyRefusal(req("application/json")); // null
 * jsonBodyRefusal(req("text/plain")); // a reason
 * ```
 */
export function jsonBodyRefusal(request: Request): string | null {
  if (!BODY_METHODS.has(request.method)) return null;
  const length = request.headers.get("content-length");
  const hasBody = request.headers.has("transfer-encoding") || (length !== null && length !== "0");
  const type = request.headers.get("content-type");
  if (type === null && !hasBody) return null;
  const media = (type ?? "").split(";")[0].trim().toLowerCase();
  if (media === "application/json" || /^application\/[\w.+-]+\+json$/.test(media)) return null;
  return `the trainer API takes JSON bodies only: send Content-Type: application/json` +
    (type === null ? "" : ` (got ${type})`);
}
