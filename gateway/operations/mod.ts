/**
 * Running the gateway as a service: health, readiness checks, Prometheus metrics and the access
 * log.
 *
 * @module
 */
export { accessLine, accessLog, type AccessRecord } from "./access_log.ts";
export {
  ADDED_LATENCY_BUCKETS,
  failureKind,
  GatewayMetrics,
  type MetricSources,
} from "./gateway_metrics.ts";
export { httpMetrics, type OperationsOptions, operationsRoutes } from "./operations_routes.ts";
export {
  Counter,
  Gauge,
  Histogram,
  MetricsRegistry,
  PROMETHEUS_CONTENT_TYPE,
} from "./prometheus.ts";
export {
  type CheckReport,
  type CheckResult,
  Readiness,
  type ReadinessReport,
} from "./readiness.ts";
