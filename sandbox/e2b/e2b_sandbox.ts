/**
 * An E2B sandbox behind the {@link Sandbox} contract. Adapter rules: every command gets an
 * explicit budget (the SDK's default is 60 s); `CommandExitError` (thrown for any non-zero exit)
 * becomes an {@link ExecResult}; a timeout or an abort kills the command through its handle;
 * stdin is uploaded as a file and redirected; every API call carries `requestTimeoutMs`.
 *
 * @module
 */
import { CommandExitError, type CommandHandle, type Sandbox as E2BSdkSandbox } from "e2b";
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  type ExecOpts,
  type ExecResult,
  type Proc,
  type Sandbox,
  SandboxError,
  TIMEOUT_EXIT_CODE,
  type WriteFileOpts,
} from "../sandbox.ts";
import { resolveInside, shellQuote } from "../shell.ts";

/** Extra time the SDK's own command deadline gets over ours (ours kills first). */
const SDK_DEADLINE_SLACK_MS = 5_000;

/**
 * How long a killed command's stream may take to end. Past it the handle is disconnected and the
 * command reported killed: a kill that E2B lost must not hold the rollout until the SDK deadline.
 */
export const KILL_GRACE_MS = 5_000;

export interface E2BSandboxParts {
  sdk: E2BSdkSandbox;
  workdir: string;
  gatewayUrl: string;
  /** User commands run as (`"user"` in E2B's base template). */
  user: string;
  requestTimeoutMs: number;
  lifetimeMs?: number;
}

interface Running {
  handle: CommandHandle;
  done: Promise<ExecResult>;
  /** Kills the command; `done` settles within {@link KILL_GRACE_MS}. */
  stop(): void;
}

/** An E2B sandbox. */
export class E2BSandbox implements Sandbox {
  readonly id: string;
  readonly provider = "e2b";
  readonly gatewayUrl: string;
  readonly workdir: string;
  #p: E2BSandboxParts;
  #live = new Set<Running>();
  #killed: Promise<void> | undefined;
  #reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(parts: E2BSandboxParts) {
    this.#p = parts;
    this.id = parts.sdk.sandboxId;
    this.gatewayUrl = parts.gatewayUrl;
    this.workdir = parts.workdir;
    if (parts.lifetimeMs) {
      const reaper = setTimeout(() => void this.kill(), parts.lifetimeMs);
      Deno.unrefTimer(reaper as unknown as number);
      this.#reaper = reaper;
    }
  }

  #alive(): void {
    if (this.#killed) throw new SandboxError(`sandbox ${this.id} was killed`);
  }

  async #start(cmd: string, opts: ExecOpts): Promise<Running> {
    this.#alive();
    let command = cmd;
    if (opts.stdin !== undefined) {
      const file = `/tmp/.rollgate/${crypto.randomUUID()}.stdin`;
      await this.writeFile(file, opts.stdin);
      command = `/bin/bash -c ${shellQuote(cmd)} < ${file}; c=$?; rm -f ${file}; exit $c`;
    }
    const timeoutMs = opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let killed = false;
    const handle = await this.#p.sdk.commands.run(command, {
      background: true,
      cwd: opts.cwd ?? this.workdir,
      envs: opts.env,
      user: this.#p.user,
      timeoutMs: timeoutMs + SDK_DEADLINE_SLACK_MS,
      requestTimeoutMs: this.#p.requestTimeoutMs,
      onStdout: (chunk: string) => {
        stdout += chunk;
        opts.onStdout?.(chunk);
      },
      onStderr: (chunk: string) => {
        stderr += chunk;
        opts.onStderr?.(chunk);
      },
    });
    let abandon = () => {};
    const abandoned = new Promise<"abandoned">((r) => abandon = () => r("abandoned"));
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    const stop = () => {
      if (killed) return;
      killed = true;
      handle.kill().catch(() => {});
      graceTimer = setTimeout(() => {
        handle.disconnect().catch(() => {});
        abandon();
      }, KILL_GRACE_MS);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    opts.signal?.addEventListener("abort", stop, { once: true });
    if (opts.signal?.aborted) stop();
    const done = (async (): Promise<ExecResult> => {
      const waited = handle.wait();
      waited.catch(() => {}); // settled after an abandon: nobody listens any more
      try {
        const r = await Promise.race([waited, abandoned]);
        if (r === "abandoned") {
          const exitCode = timedOut ? TIMEOUT_EXIT_CODE : 137;
          return { exitCode, stdout, stderr, timedOut };
        }
        return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, timedOut };
      } catch (err) {
        if (timedOut) return { exitCode: TIMEOUT_EXIT_CODE, stdout, stderr, timedOut };
        if (err instanceof CommandExitError) {
          // envd reports a killed process with a negative code and an error like "signal: killed".
          const code = err.exitCode >= 0 ? err.exitCode : killed ? 137 : 128 + 9;
          return { exitCode: code, stdout: err.stdout, stderr: err.stderr, timedOut };
        }
        if (killed) return { exitCode: 137, stdout, stderr, timedOut };
        throw new SandboxError(
          `e2b sandbox ${this.id}: command failed: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      } finally {
        clearTimeout(timer);
        clearTimeout(graceTimer);
        opts.signal?.removeEventListener("abort", stop);
      }
    })();
    const running = { handle, done, stop };
    this.#live.add(running);
    done.catch(() => {}).finally(() => this.#live.delete(running));
    return running;
  }

  async exec(cmd: string, opts: ExecOpts = {}): Promise<ExecResult> {
    return await (await this.#start(cmd, opts)).done;
  }

  async spawn(cmd: string, opts: ExecOpts = {}): Promise<Proc> {
    const r = await this.#start(cmd, opts);
    return {
      id: String(r.handle.pid),
      wait: () => r.done,
      kill: async () => {
        r.stop();
        await r.done.catch(() => {});
      },
    };
  }

  async writeFile(path: string, data: string | Uint8Array, opts: WriteFileOpts = {}) {
    this.#alive();
    const inside = resolveInside(this.workdir, path);
    const body = typeof data === "string"
      ? data
      : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
    await this.#p.sdk.files.write(inside, body, {
      user: this.#p.user,
      requestTimeoutMs: this.#p.requestTimeoutMs,
    });
    if (opts.mode !== undefined) {
      const r = await this.exec(`chmod ${opts.mode.toString(8)} ${shellQuote(inside)}`, {
        timeoutMs: 30_000,
      });
      if (r.exitCode !== 0) throw new SandboxError(`chmod ${inside}: ${r.stderr.trim()}`);
    }
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.#alive();
    const inside = resolveInside(this.workdir, path);
    try {
      return await this.#p.sdk.files.read(inside, {
        format: "bytes",
        user: this.#p.user,
        requestTimeoutMs: this.#p.requestTimeoutMs,
      });
    } catch (err) {
      throw new SandboxError(
        `e2b sandbox ${this.id}: reading ${inside}: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }

  kill(): Promise<void> {
    this.#killed ??= (async () => {
      clearTimeout(this.#reaper);
      try {
        await this.#p.sdk.kill({ requestTimeoutMs: this.#p.requestTimeoutMs });
      } finally {
        // The killed sandbox ends its command streams; wait for them briefly, then let go.
        let timer: ReturnType<typeof setTimeout> | undefined;
        const grace = new Promise<void>((r) => timer = setTimeout(r, 5_000));
        const ended = Promise.all([...this.#live].map((r) => r.done.catch(() => {})));
        await Promise.race([ended, grace]);
        clearTimeout(timer);
      }
    })();
    return this.#killed;
  }
}
