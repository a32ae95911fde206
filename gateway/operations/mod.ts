/**
 * Running the gateway as a service: health, readiness checks, Prometheus metrics and the access
 * log.
 *
 * @module
 */
export { accessLog } from "./access_log.ts";
export { GatewayMetrics } from "./gateway_metrics.ts";
export { httpMetrics, operationsRoutes } from "./operations_routes.ts";
export { Readiness } from "./readiness.ts";
