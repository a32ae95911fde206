/**
 * The `serve` flags that bound what clients may ask and how long anything waits: admission
 * limits, body sizes, turn and delivery timeouts, HTTP timeouts. Every flag has a default (in
 * `gateway/` and `generation/`); a flag not given leaves it.
 *
 * @module
 */
import type {
  ConnectionLimits,
  GatewayLimits,
  GatewayTimeouts,
  HttpTimeouts,
} from "../gateway/mod.ts";
import type { GateOptions } from "../generation/mod.ts";
import { integerFlag, POSITIVE, secondsFlag } from "./flags.ts";

/** `parseArgs` options of these flags (all strings). */
export const LIMIT_FLAGS = Object.fromEntries(
  [
    "max-body-bytes",
    "max-trainer-body-bytes",
    "max-tool-body-bytes",
    "max-tool-bytes-per-rollout",
    "max-pending-per-rollout",
    "max-pending",
    "max-history-messages",
    "turn-timeout",
    "abandon-grace",
    "rollout-idle-timeout",
    "ack-timeout",
    "lease",
    "max-lease",
    "header-timeout",
    "body-timeout",
    "idle-timeout",
    "body-deadline",
    "max-connections",
    "max-connections-per-address",
  ].map((name) => [name, { type: "string" as const }]),
);

export interface ServeLimits {
  limits: Partial<GatewayLimits>;
  timeouts: GatewayTimeouts;
  delivery: GateOptions;
  http: Partial<HttpTimeouts>;
  connections: Partial<ConnectionLimits>;
}

/** Reads the flags (and `ROLLGATE_MAX_BODY_BYTES`); absent ones stay undefined. */
export function serveLimits(
  values: Readonly<Record<string, string | boolean | string[] | undefined>>,
  env: (name: string) => string | undefined,
): ServeLimits {
  const text = (name: string) => values[name] as string | undefined;
  const int = (name: string, fallback?: string) =>
    integerFlag(text(name) ?? fallback, `--${name}`, POSITIVE);
  const ms = (name: string) => secondsFlag(text(name), `--${name}`);
  const drop = <T extends object>(o: T): T =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  return {
    limits: drop({
      maxBodyBytes: int("max-body-bytes", env("ROLLGATE_MAX_BODY_BYTES")),
      maxTrainerBodyBytes: int("max-trainer-body-bytes"),
      maxToolBodyBytes: int("max-tool-body-bytes"),
      maxToolBytesPerRollout: int("max-tool-bytes-per-rollout"),
      maxPendingPerRollout: int("max-pending-per-rollout"),
      maxPending: int("max-pending"),
      maxHistoryMessages: int("max-history-messages"),
    }),
    timeouts: drop({
      turnMs: ms("turn-timeout"),
      abandonGraceMs: ms("abandon-grace"),
      rolloutIdleMs: ms("rollout-idle-timeout"),
    }),
    delivery: drop({
      ackTimeoutMs: ms("ack-timeout"),
      defaultLeaseMs: ms("lease"),
      maxLeaseMs: ms("max-lease"),
    }),
    http: drop({
      headerMs: ms("header-timeout"),
      bodyIdleMs: ms("body-timeout"),
      idleMs: ms("idle-timeout"),
      bodyMs: ms("body-deadline"),
    }),
    connections: drop({
      maxConnections: int("max-connections"),
      maxConnectionsPerAddress: int("max-connections-per-address"),
    }),
  };
}
