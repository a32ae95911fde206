/**
 * One host process (here: one `bwrap` invocation) with the sandbox contract's semantics: streamed
 * and collected output, a time budget, an abort signal, and a kill that takes the whole process
 * group down. The exit code never turns into an exception.
 *
 * @module
 */
import { childrenOf, killPid, stoppedOrGone } from "./proc_scan.ts";
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  type ExecOpts,
  type ExecResult,
  TIMEOUT_EXIT_CODE,
} from "../sandbox.ts";

/** Output kept per stream; beyond it the head is kept and a marker appended. */
export const MAX_CAPTURED_CHARS = 32 * 1024 * 1024;

/**
 * How long output may still arrive after the process exited. Past it, whoever holds the pipe
 * open (a process that escaped the kill) no longer holds up the result: reading stops.
 */
export const DRAIN_AFTER_EXIT_MS = 2_000;

/** Appended to a stream whose reading stopped at {@link DRAIN_AFTER_EXIT_MS}. */
export const PIPE_HELD_MARKER = "\n[output pipe held open after exit: reading stopped]\n";

/** A started host process. */
export interface HostProcess {
  readonly pid: number;
  /** Resolves with the result once the process has exited and its output is drained. */
  readonly done: Promise<ExecResult>;
  /** SIGKILLs the process group; resolves when the process is gone. Idempotent. */
  kill(): Promise<void>;
}

/** How long a kill waits for the stopped process to be seen stopped before it scans anyway. */
const STOP_WAIT_MS = 500;

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

interface Collected {
  /** Resolves with the text once the stream ended or reading was stopped. */
  text: Promise<string>;
  /** Stops reading; `text` resolves with what came so far and the marker. */
  stop(): void;
}

function collect(
  stream: ReadableStream<Uint8Array>,
  onChunk: ((chunk: string) => void) | undefined,
): Collected {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let stopped = false;
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
  const collected = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        take(decoder.decode(value, { stream: true }));
      }
    } catch (err) {
      if (!stopped) throw err;
    }
    take(decoder.decode());
    return stopped ? text + PIPE_HELD_MARKER : text;
  })();
  return {
    text: collected,
    stop() {
      stopped = true;
      reader.cancel().catch(() => {});
    },
  };
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
  let killing: Promise<void> | undefined;
  const killNow = () =>
    killing ??= (async () => {
      if (exited) return;
      // Stopped first, so that bwrap cannot start the sandbox's init between the scan for it and
      // the kill: an init started in that window, before it set its parent-death signal, would
      // outlive bwrap with what it runs (seen under load: a killed `sleep` left running).
      killGroup(child.pid, "SIGSTOP");
      const until = Date.now() + STOP_WAIT_MS;
      while (!stoppedOrGone(child.pid) && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 2));
      }
      // bwrap's child is the sandbox's PID-namespace init: killing it ends everything inside even
      // if the parent-death signal does not cascade.
      const inits = childrenOf(child.pid);
      killGroup(child.pid, "SIGKILL");
      inits.forEach(killPid);
    })();
  const timeoutMs = opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
  const timer = setTimeout(() => {
    timedOut = true;
    void killNow();
  }, timeoutMs);
  const onAbort = () => void killNow();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.signal?.aborted) void killNow();

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
    const s = await status;
    // Output normally ends with the process; bound the wait for it anyway (every wait has an end).
    let drainTimer: ReturnType<typeof setTimeout> | undefined;
    const drained = Promise.all([stdout.text, stderr.text]);
    await Promise.race([
      drained,
      new Promise<void>((r) =>
        drainTimer = setTimeout(() => {
          stdout.stop();
          stderr.stop();
          r();
        }, DRAIN_AFTER_EXIT_MS)
      ),
    ]);
    clearTimeout(drainTimer);
    const [out, err] = await drained;
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
      await killNow();
      await status;
    },
  };
}
