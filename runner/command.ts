/**
 * The `rollout` verb of `main.ts`: parses the flags, wires Ctrl-C (first: stop scheduling and
 * kill running agents, nothing half-done is recorded; second: exit at once) and runs
 * {@link runRollouts}. Setup problems surface as one line ({@link RunnerError}), no stack trace.
 *
 * @module
 */
import { parseRolloutArgs, USAGE } from "./options.ts";
import { runRollouts } from "./run.ts";

/** Runs `main.ts rollout <args>`; the process exit code (0 ok, 130 interrupted). */
export async function rolloutCommand(args: string[]): Promise<number> {
  const options = parseRolloutArgs(args);
  if (!options) {
    console.log(USAGE);
    return 0;
  }
  const abort = new AbortController();
  const onSignal = () => {
    if (abort.signal.aborted) Deno.exit(130);
    console.error(
      "\nrollgate: interrupted; stopping the running agents (Ctrl-C again to quit now)",
    );
    abort.abort();
  };
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    const outcome = await runRollouts({ ...options, signal: abort.signal });
    return outcome.interrupted ? 130 : 0;
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
  }
}
