/**
 * One host process (here: one `bwrap` invocation) with the sandbox contract's semantics: streamed
 * and collected output, a time budget, an abort signal, and a kill that takes the whole process
 * group down. The exit code never turns into an exception.
 *
 * @module
 */
import { childrenOf, killPid } from "./proc_scan.ts";
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  type ExecOpts,
  type ExecResult,
  TIMEOUT_EXIT_CODE,
} from "../sandbox.ts";

/** Output kept per stream; beyond it the head is kept and a marker appended. */
export const MAX_CAPTURED_CHARS = 32 * 1024 * 1024;

/** A started host process. */
export interface HostProcess {
  readonly pid: number;
  /** Resolves with the result once the process has exited and its output is drained. */
  readonly done: Promise<ExecResult>;
  /** SIGKILLs the process group; resolves when the process is gone. Idempotent. */
  kill(): Promise<void>;
}

/** Sends `signal` to the process group led by `pid` (started with `detached: true`). */
function killGroup(pid: number, signal: Deno.Signal): void {
  try {
    Deno.kill(-pid, signal);
  } catch {
    try {
      Deno.kill(pid, signal);
    } catch { /* already gone */ }
  }
}

async function collect(
  stream: ReadableStream<Uint8Array>,
  onChunk: ((chunk: string) => void) | undefined,
): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  let truncated = false;
  const take = (chunk: string) => {
    if (!chunk) return;
    try {
      onChunk?.(chunk);
    } catch { /* a listener's bug must not lose the output */ }
    if (truncated) return;
    if (text.length + chunk.length > MAX_CAPTURED_CHARS) {
      text += chunk.slice(0, MAX_CAPTURED_CHARS - text.length) + "\n[output truncated]\n";
      truncated = true;
    } else text += chunk;
  };
  for await (const bytes of stream) take(decoder.decode(bytes, { stream: true }));
  take(decoder.decode());
  return text;
}

/**
 * Starts `argv` in its own session (process group) with exactly `env`.
 *
 * @example
 * ```ts
 * const p = startHostProcess(["sh", "-c", "echo hi"], { PATH: "/usr/bin:/bin" }, {});
 * const { exitCode, stdout } = await p.done; // 0, "hi\n"
 * ```
 */
export function startHostProcess(
  argv: string[],
  env: Record<string, string>,
  opts: Pick<ExecOpts, "stdin" | "onStdout" | "onStderr" | "timeoutMs" | "signal">,
): HostProcess {
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    env,
    clearEnv: true,
    stdin: opts.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  let timedOut = false;
  let exited = false;
  const killNow = () => {
    if (exited) return;
    // bwrap's child is the sandbox's PID-namespace init: killing it ends everything inside even
    // if the parent-death signal does not cascade.
    const inits = childrenOf(child.pid);
    killGroup(child.pid, "SIGKILL");
    inits.forEach(killPid);
  };
  const timeoutMs = opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
  const timer = setTimeout(() => {
    timedOut = true;
    killNow();
  }, timeoutMs);
  const onAbort = () => killNow();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.signal?.aborted) killNow();

  if (opts.stdin !== undefined) {
    const data = typeof opts.stdin === "string" ? new TextEncoder().encode(opts.stdin) : opts.stdin;
    const writer = child.stdin.getWriter();
    writer.write(data).then(() => writer.close()).catch(
      () => {/* the command closed stdin early */},
    );
  }
  const stdout = collect(child.stdout, opts.onStdout);
  const stderr = collect(child.stderr, opts.onStderr);
  const status = child.status.then((s) => {
    exited = true;
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
    return s;
  });
  const done = (async (): Promise<ExecResult> => {
    const [s, out, err] = await Promise.all([status, stdout, stderr]);
    return {
      exitCode: timedOut ? TIMEOUT_EXIT_CODE : s.code,
      stdout: out,
      stderr: err,
      timedOut,
    };
  })();
  return {
    pid: child.pid,
    done,
    async kill() {
      killNow();
      await status;
    },
  };
}
