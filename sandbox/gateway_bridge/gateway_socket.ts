/**
 * The gateway side of the sandbox bridge: one Unix socket per rollout, serving the gateway's
 * `fetch` handler. The socket is bind-mounted into the sandbox, where the forwarder exposes it as
 * `http://127.0.0.1:8787`; the listener a request arrives on names its rollout.
 *
 * Requests are rewritten before the gateway sees them:
 * - `req.url` becomes plain `http://<host>/<path>` (Deno reports `http+unix://…` for Unix
 *   listeners; the gateway routes on the pathname, but nothing downstream should see that scheme);
 * - a bare `/v1/...` path becomes `/rollout/<id>/v1/...`, so an agent may use either the gateway
 *   origin or the rollout's base URL;
 * - `/rollout/<other id>/...` is refused (403) and so is everything else outside `/v1`, the
 *   rollout's prefix and `/health`: the trainer API (`/api`) is unreachable from a sandbox.
 *
 * @module
 */
import type { FetchHandler } from "../sandbox.ts";

export interface RolloutSocketOptions {
  /** Socket file to create (a stale file there is replaced). */
  path: string;
  rolloutId: string;
  /** The gateway's handler, e.g. `gateway.app.fetch`. */
  fetch: FetchHandler;
}

/** A listening per-rollout socket. */
export interface RolloutSocket {
  readonly path: string;
  readonly rolloutId: string;
  /** Stops listening and removes the socket file; in-flight requests get up to 2 s. Idempotent. */
  close(): Promise<void>;
}

function refuse(status: number, message: string): Response {
  const type = status === 404 ? "not_found" : "permission_error";
  return Response.json({ error: { type, message } }, { status });
}

/** `Host` header if it is a plain host[:port], else `localhost`. */
function safeHost(req: Request): string {
  const host = req.headers.get("host") ?? "";
  return /^[A-Za-z0-9.\-\[\]:]{1,255}$/.test(host) ? host : "localhost";
}

/**
 * The rewriting handler alone (no socket): what a request on the rollout's socket turns into.
 * Exported for tests and for other transports that carry a rollout identity.
 */
export function rolloutSocketHandler(rolloutId: string, fetch: FetchHandler): FetchHandler {
  const prefix = `/rollout/${encodeURIComponent(rolloutId)}`;
  return (req: Request) => {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return refuse(400, "unparseable request URL");
    }
    let path = url.pathname;
    if (path === prefix || path.startsWith(`${prefix}/`) || path === "/health") {
      // the rollout's own routes, or the health check
    } else if (path.startsWith("/rollout/")) {
      return refuse(403, `this connection serves rollout ${rolloutId} only`);
    } else if (path === "/v1" || path.startsWith("/v1/")) {
      path = `${prefix}${path}`;
    } else {
      return refuse(404, `not served to sandboxes: ${req.method} ${path}`);
    }
    const init: RequestInit & { duplex?: "half" } = {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      redirect: "manual",
    };
    if (req.body) init.duplex = "half";
    return fetch(new Request(`http://${safeHost(req)}${path}${url.search}`, init));
  };
}

/** Serves `fetch` for one rollout on a new Unix socket at `path`. */
export function serveRolloutSocket(o: RolloutSocketOptions): RolloutSocket {
  try {
    Deno.removeSync(o.path);
  } catch { /* no stale socket */ }
  const handler = rolloutSocketHandler(o.rolloutId, o.fetch);
  const server = Deno.serve({
    path: o.path,
    onListen() {},
    onError(err) {
      const message = err instanceof Error ? err.message : String(err);
      return refuse(500, `gateway handler failed: ${message}`);
    },
  }, (req) => handler(req));
  let closing: Promise<void> | undefined;
  return {
    path: o.path,
    rolloutId: o.rolloutId,
    close() {
      closing ??= (async () => {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const grace = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, 2_000);
        });
        await Promise.race([server.shutdown().catch(() => {}), grace]);
        clearTimeout(timer);
        try {
          await Deno.remove(o.path);
        } catch { /* removed by the server already */ }
      })();
      return closing;
    },
  };
}
