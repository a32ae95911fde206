/**
 * Runs one agent CLI INSIDE a sandbox: the harness's config files written into the sandbox's
 * `HOME` with `sandbox.writeFile`, then one `sandbox.exec` of the harness's launch command (its
 * environment, base URL = the sandbox's gateway, e.g. the bridge at `http://127.0.0.1:8787`,
 * stdin at `/dev/null`) under a wall-clock budget. The outcome is read from the CLI's own event
 * stream by the harness's `completion`.
 *
 * @module
 */
import {
  CLI_MISSING_EXIT_CODE,
  CLI_MISSING_MARKER,
  type Harness,
  sandboxLaunch,
} from "../harness/mod.ts";
import { LOCAL_MOUNTS, type Sandbox } from "../sandbox/mod.ts";

/** How one agent run ended (the `agent` field of a result record). */
export interface AgentOutcome {
  /** The harness's verdict from the CLI's event stream. */
  ok: boolean;
  exit_code: number;
  error: string | null;
  final_text: string | null;
  timed_out: boolean;
  duration_ms: number;
  /** The end of the CLI's stderr, when it failed. */
  stderr_tail?: string;
  /** The CLI was not in the sandbox and could not be installed (a setup problem, not a result). */
  cli_missing?: boolean;
}

export interface SandboxAgentOptions {
  sandbox: Sandbox;
  harness: Harness;
  prompt: string;
  rolloutId: string;
  token: string;
  /** Model id the CLI sends. */
  model: string;
  budgetMs: number;
  signal?: AbortSignal;
  /** Added to the harness's environment. */
  extraEnv?: Record<string, string>;
}

const TAIL = 2_000;

/** The sandbox's `HOME` (where the harness's config files go). */
export async function sandboxHome(sandbox: Sandbox): Promise<string> {
  if (sandbox.provider === "local") return LOCAL_MOUNTS.home;
  const r = await sandbox.exec('printf %s "$HOME"', { timeoutMs: 30_000 });
  const home = r.stdout.trim();
  return r.exitCode === 0 && home.startsWith("/") && home !== "/" ? home : "/tmp/rollgate-home";
}

/** Runs the harness once in `sandbox` on `prompt`. */
export async function runAgentInSandbox(o: SandboxAgentOptions): Promise<AgentOutcome> {
  const home = await sandboxHome(o.sandbox);
  const launch = sandboxLaunch(o.harness, o.prompt, {
    gatewayUrl: o.sandbox.gatewayUrl,
    rolloutId: o.rolloutId,
    token: o.token,
    model: o.model,
    workdir: o.sandbox.workdir,
    home,
  }, { ROLLGATE_ROLLOUT_ID: o.rolloutId, ...o.extraEnv });
  for (const [path, text] of Object.entries(launch.files)) {
    await o.sandbox.writeFile(path, text);
  }
  const started = performance.now();
  const r = await o.sandbox.exec(launch.command, {
    env: launch.env,
    timeoutMs: o.budgetMs,
    signal: o.signal,
  });
  const duration_ms = Math.round(performance.now() - started);
  const result = o.harness.resultFile
    ? await o.sandbox.readFile(`${home}/${o.harness.resultFile}`).then(
      (bytes) => new TextDecoder().decode(bytes),
      () => undefined,
    )
    : undefined;
  const completion = o.harness.completion(r.stdout, r.exitCode, result);
  const cliMissing = r.exitCode === CLI_MISSING_EXIT_CODE && r.stderr.includes(CLI_MISSING_MARKER);
  let error = completion.error ?? null;
  if (cliMissing) {
    error = r.stderr.slice(r.stderr.indexOf(CLI_MISSING_MARKER)).split("\n")[0];
  } else if (r.timedOut) error = `timed out after ${Math.round(o.budgetMs / 1000)} s`;
  else if (o.signal?.aborted) error = "interrupted";
  const ok = completion.ok && !r.timedOut && !cliMissing;
  return {
    ok,
    exit_code: r.exitCode,
    error: ok ? null : error ?? `exit code ${r.exitCode}`,
    final_text: completion.finalText ?? null,
    timed_out: r.timedOut,
    duration_ms,
    ...(ok ? {} : { stderr_tail: r.stderr.slice(-TAIL) }),
    ...(cliMissing ? { cli_missing: true } : {}),
  };
}
