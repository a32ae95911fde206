/**
 * Running the gateway as a service: health, readiness checks, Prometheus metrics and the access
 * log.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GatewayMetrics, operationsRoutes, Readiness } from "./mod.ts";
 *
 * let loaded = false;
 * const readiness = new Readiness().add("model", () => loaded || "loading the model files");
 * const app = operationsRoutes({ readiness, metrics: new GatewayMetrics() });
 * assert.equal((await app.request("/health")).status, 200);
 * assert.equal((await app.request("/ready")).status, 503);
 * loaded = true;
 * assert.equal((await app.request("/ready")).status, 200);
 * assert.match(await (await app.request("/metrics")).text(), /rollgate_/);
 * ```
 *
 * @module
 */
export { accessLog } from "./access_log.ts";
export { GatewayMetrics } from "./gateway_metrics.ts";
export { httpMetrics, operationsRoutes } from "./operations_routes.ts";
export { Readiness } from "./readiness.ts";
