/**
 * The operator's endpoints: `GET /` (a landing page: what this is and where to go),
 * `GET /health` (the process answers), `GET /ready` (every readiness check passes; 503 with the
 * failing ones otherwise) and `GET /metrics` (Prometheus text; needs the admin token when one is
 * set, since it reveals traffic).
 *
 * @module
 */
import { Hono, type MiddlewareHandler } from "hono";
import { presentedToken } from "../http/mod.ts";
import { sameToken } from "../security/mod.ts";
import type { GatewayMetrics } from "./gateway_metrics.ts";
import { landing } from "./landing.ts";
import { PROMETHEUS_CONTENT_TYPE } from "./prometheus.ts";
import type { Readiness } from "./readiness.ts";

export interface OperationsOptions {
  readiness: Readiness;
  metrics: GatewayMetrics;
  /** When set, `/metrics` needs it (`Authorization: Bearer …` or `x-api-key`). */
  adminToken?: string;
}

/**
 * @example
 * ```ts
 * import { GatewayMetrics, Readiness } from "./mod.ts";
 * const app = operationsRoutes({ readiness: new Readiness(), metrics: new GatewayMetrics() });
 * (await app.request("/health")).status; // 200
 * ```
 */
export function operationsRoutes(o: OperationsOptions): Hono {
  const app = new Hono();
  app.get("/", landing);
  app.get("/health", (c) => c.json({ ok: true }));
  app.get("/ready", async (c) => {
    const report = await o.readiness.report();
    return c.json(report, report.ready ? 200 : 503);
  });
  app.get("/metrics", async (c) => {
    if (o.adminToken && !sameToken(presentedToken(c.req.raw.headers), o.adminToken)) {
      return c.json({
        error: { type: "unauthorized", message: "/metrics requires the admin token" },
      }, 401);
    }
    return c.body(await o.metrics.scrape(), 200, { "content-type": PROMETHEUS_CONTENT_TYPE });
  });
  return app;
}

/** Hono middleware counting requests in flight and responses by status. */
export function httpMetrics(metrics: GatewayMetrics): MiddlewareHandler {
  return async (c, next) => {
    metrics.httpStarted();
    try {
      await next();
    } finally {
      metrics.httpFinished(c.res.status);
    }
  };
}
