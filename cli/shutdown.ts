/**
 * Stopping `serve` without losing a turn: on SIGTERM (or SIGINT) the gateway stops taking new
 * turns and reports not ready, lets the turns in flight finish within a grace period (the trainer
 * API keeps working, so a trainer can still complete them), fails what is left, lets the answers
 * reach their agents, and exits 0. A second signal exits at once.
 *
 * @module
 */
import type { Gateway } from "../gateway/mod.ts";

/** Grace period of a drain when `--drain-grace` is not given, in seconds. */
export const DEFAULT_DRAIN_GRACE_S = 30;

/** How long answers and open responses get to be written after the turns settled, in ms. */
const FLUSH_MS = 2_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function turns(n: number): string {
  return `${n} turn${n === 1 ? "" : "s"}`;
}

/**
 * Drains `gw` and closes `server`: see the module documentation. Resolves once the server is
 * closed (or `FLUSH_MS` passed); the caller exits.
 */
export async function drainGateway(
  gw: Gateway,
  server: { shutdown(): Promise<void> },
  graceS: number,
  log: (line: string) => void = console.log,
): Promise<void> {
  const started = Date.now();
  gw.rollouts.close(
    "rollgate is shutting down and takes no new turns; retry against its successor",
  );
  const inFlight = gw.rollouts.pendingTurns();
  log(`rollgate: draining ${turns(inFlight)} in flight (grace ${graceS} s); no new turns`);
  await Promise.race([gw.rollouts.whenIdle(), sleep(graceS * 1000)]);
  const left = gw.rollouts.pendingTurns();
  if (left > 0) {
    gw.rollouts.abandon(`rollgate shut down before this turn was answered (grace ${graceS} s)`);
  }
  log(
    `rollgate: drained: ${turns(inFlight - left)} finished` +
      (left > 0 ? `, ${turns(left)} abandoned` : "") + ` in ${Date.now() - started} ms`,
  );
  await Promise.race([server.shutdown(), sleep(FLUSH_MS)]);
}

/**
 * Calls `drain` on the first SIGTERM or SIGINT, then exits 0; a second signal exits at once
 * (status 1).
 */
export function onShutdownSignal(drain: () => Promise<void>): void {
  let draining = false;
  const handler = () => {
    if (draining) Deno.exit(1);
    draining = true;
    drain().finally(() => Deno.exit(0));
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(signal, handler);
}
