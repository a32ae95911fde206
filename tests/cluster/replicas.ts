/**
 * Replicas of one gateway for tests: `main.ts serve --database-url` processes on a PostgreSQL
 * server the test started, with a short owner lease so takeovers happen within seconds, and the
 * HTTP helpers the cluster tests share.
 *
 * @module
 */
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";

/** The owner lease the tests give replicas (seconds). */
export const TEST_LEASE_S = 2;

/** `lease`: the owner lease in seconds; `"default"`: the one `serve` picks. */
export function startReplicas(
  n: number,
  databaseUrl: string,
  args: string[] = [],
  lease: number | "default" = TEST_LEASE_S,
): Promise<GatewayProcess[]> {
  return Promise.all(
    Array.from(
      { length: n },
      () =>
        startGateway([
          "--database-url",
          databaseUrl,
          ...(lease === "default" ? [] : ["--owner-lease", String(lease)]),
          // HAProxy, in front of them in the tests, is on loopback.
          "--trusted-proxies",
          "127.0.0.1",
          ...args,
        ]),
    ),
  );
}

// deno-lint-ignore no-explicit-any
export type Json = any;

/** One HTTP call with a JSON body; never throws (a broken connection is status 0). */
export async function call(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string>; timeoutMs?: number } =
    {},
): Promise<{ status: number; json: Json }> {
  try {
    const res = await fetch(url, {
      method: init.method ?? (init.body === undefined ? "GET" : "POST"),
      headers: { "content-type": "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    let json: Json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: res.status, json };
  } catch (e) {
    return { status: 0, json: String(e) };
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
