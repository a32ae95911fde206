/**
 * Runs a harness as a plain local subprocess: config files written below `home`, an explicit
 * environment (nothing inherited, `env -i` style), cwd = the workdir, stdin at `/dev/null`, and a
 * time budget after which the CLI's whole process group is killed. No isolation beyond that; a
 * sandbox backend does the same inside a sandbox.
 *
 * @example
 * ```ts
 * import { codex, runLocal } from "./mod.ts";
 * declare const rollout: { id: string; token: string };
 *
 * const run = await runLocal(codex, "Create hello.txt", {
 *   gatewayUrl: "http://127.0.0.1:7860",
 *   rolloutId: rollout.id,
 *   token: rollout.token,
 *   model: "rollgate-policy",
 *   workdir: "/tmp/w",
 *   home: "/tmp/h",
 * }, { timeoutMs: 120_000 });
 * if (!run.completion.ok) console.error(run.completion.error, run.stderr);
 * ```
 *
 * @module
 */
import type { Completion, Harness, LaunchOptions } from "./harness.ts";

/** `agents/node_modules/.bin` of this repository, where the pinned npm CLIs are installed. */
export const AGENTS_BIN_DIR = new URL("../agents/node_modules/.bin", import.meta.url).pathname;

/** `agents/venv/bin` of this repository, where the pinned Python CLIs are installed. */
export const AGENTS_VENV_BIN_DIR = new URL("../agents/venv/bin", import.meta.url).pathname;

/** Where this repository installs `h`'s CLI (`npm install --prefix agents`, `agents/install_python.sh`). */
export function agentBinDir(h: Pick<Harness, "registry">): string {
  return h.registry === "pypi" ? AGENTS_VENV_BIN_DIR : AGENTS_BIN_DIR;
}

/** The command that installs `h`'s CLI into this repository's `agents/`. */
export function agentInstallHint(h: Pick<Harness, "registry">): string {
  return h.registry === "pypi" ? "sh agents/install_python.sh" : "npm install --prefix agents";
}

/** System directories every run's `PATH` ends with. */
const SYSTEM_PATH = ["/usr/local/bin", "/usr/bin", "/bin"];

export interface RunLocalOptions {
  /** Time budget; default 120 s. On expiry the process group gets SIGTERM, then SIGKILL. */
  timeoutMs?: number;
  /** Where the CLI binaries live; default {@link agentBinDir}. */
  binDir?: string;
  /** Directory with the `node` the JS-launched CLIs need; default: found on this process's PATH. */
  nodeDir?: string;
  /** Added to (and overriding) the harness's environment. */
  extraEnv?: Record<string, string>;
  /** Grace period between SIGTERM and SIGKILL; default 2 s. */
  killGraceMs?: number;
}

export interface RunResult {
  exitCode: number;
  /** Set when the process died of a signal. */
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  completion: Completion;
  /** The command line that ran (binary path first). */
  command: string[];
}

/** The directory holding an executable `node` on this process's PATH, if any. */
export function findNodeDir(): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    try {
      const st = Deno.statSync(`${dir}/node`);
      if (st.isFile && (st.mode ?? 0o111) & 0o111) return dir;
    } catch { /* not here */ }
  }
  return undefined;
}

/** Whether the harness's binary is installed in `binDir`. */
export function binaryInstalled(h: Harness, binDir = agentBinDir(h)): boolean {
  try {
    return Deno.statSync(`${binDir}/${h.bin}`).isFile;
  } catch {
    return false;
  }
}

/** `PATH` for a run: the CLIs, node, then the system directories. */
export function runPath(binDir: string, nodeDir: string | undefined): string {
  const dirs = [binDir, ...(nodeDir ? [nodeDir] : []), ...SYSTEM_PATH];
  return [...new Set(dirs)].join(":");
}

/** Signals the process group led by `pid` (the child was started in its own session). */
function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch { /* already gone */ }
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) text += chunk;
  return text;
}

/** Prepares the harness's config under `o.home`, runs its CLI once, and parses the outcome. */
export async function runLocal(
  h: Harness,
  prompt: string,
  o: LaunchOptions,
  options: RunLocalOptions = {},
): Promise<RunResult> {
  const binDir = options.binDir ?? agentBinDir(h);
  const timeoutMs = options.timeoutMs ?? 120_000;
  const grace = options.killGraceMs ?? 2_000;
  await Deno.mkdir(o.home, { recursive: true });
  await h.prepare(o.home, o);
  const resultPath = h.resultFile ? `${o.home}/${h.resultFile}` : undefined;
  if (resultPath) await Deno.remove(resultPath).catch(() => {});
  const env = {
    PATH: runPath(binDir, options.nodeDir ?? findNodeDir()),
    ...h.env(o),
    ...options.extraEnv,
  };
  const command = [`${binDir}/${h.bin}`, ...h.args(prompt, o)];
  const started = performance.now();
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: o.workdir,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // Own session and process group, so the budget can end the CLI and everything it spawned.
    detached: true,
  }).spawn();
  const out = drain(child.stdout);
  const err = drain(child.stderr);

  let timedOut = false;
  let hardKill: ReturnType<typeof setTimeout> | undefined;
  const budget = setTimeout(() => {
    timedOut = true;
    killGroup(child.pid, "SIGTERM");
    hardKill = setTimeout(() => killGroup(child.pid, "SIGKILL"), grace);
  }, timeoutMs);
  const status = await child.status;
  clearTimeout(budget);
  clearTimeout(hardKill);
  // Leftovers (a background process the agent started) would hold the pipes open.
  killGroup(child.pid, "SIGKILL");
  const [stdout, stderr] = await Promise.all([out, err]);
  const durationMs = Math.round(performance.now() - started);

  const result = resultPath
    ? await Deno.readTextFile(resultPath).catch(() => undefined)
    : undefined;
  let completion = h.completion(stdout, status.code, result);
  if (timedOut) {
    completion = { ...completion, ok: false, error: `timed out after ${timeoutMs} ms` };
  }
  return {
    exitCode: status.code,
    signal: status.signal,
    timedOut,
    durationMs,
    stdout,
    stderr,
    completion,
    command,
  };
}

/** The last `n` characters of a text, for failure messages. */
export function tail(text: string, n = 4000): string {
  return text.length <= n ? text : `…${text.slice(-n)}`;
}

/** A readable account of a run for a failed assertion. */
export function describeRun(run: RunResult): string {
  return [
    `command: ${run.command.map((a) => JSON.stringify(a)).join(" ")}`,
    `exit ${run.exitCode}${run.signal ? ` (${run.signal})` : ""}${
      run.timedOut ? ", timed out" : ""
    }` +
    `, ${run.durationMs} ms; completion: ${JSON.stringify(run.completion)}`,
    `--- stderr (tail) ---\n${tail(run.stderr)}`,
    `--- stdout (tail) ---\n${tail(run.stdout)}`,
  ].join("\n");
}
