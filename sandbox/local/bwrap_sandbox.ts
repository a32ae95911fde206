/**
 * One local sandbox: a host directory (`workspace/`, `home/`, `tmp/`) plus, per command, one
 * `bwrap` invocation over it (see `bwrap_args.ts`). Commands do not share processes or a network
 * namespace, only the file system; every command of a sandbox with a gateway starts its own
 * forwarder to the rollout's socket before running. Killing a command SIGKILLs its `bwrap`
 * process group; `--die-with-parent` and the PID namespace take everything inside with it.
 *
 * @module
 */
import {
  type ExecOpts,
  type ExecResult,
  type Proc,
  type Sandbox,
  SandboxError,
  type WriteFileOpts,
} from "../sandbox.ts";
import { parentDir } from "../shell.ts";
import { bwrapArgs, type BwrapLayout, INSIDE } from "./bwrap_args.ts";
import type { RolloutSocket } from "../gateway_bridge/mod.ts";
import { type HostProcess, startHostProcess } from "./host_process.ts";
import { hostPathOf } from "./host_paths.ts";
import { killAllWithArg } from "./proc_scan.ts";

/** Everything a local sandbox is made of, assembled by the provider. */
export interface LocalSandboxParts {
  id: string;
  layout: BwrapLayout;
  workdir: string;
  /** Environment of every command (PATH, HOME, the spec's env). */
  env: Record<string, string>;
  gatewayUrl: string;
  socket?: RolloutSocket;
  lifetimeMs?: number;
}

/** A local (bubblewrap) sandbox. */
export class LocalSandbox implements Sandbox {
  readonly id: string;
  readonly provider = "local";
  readonly gatewayUrl: string;
  readonly workdir: string;
  /** The host directory behind the sandbox (removed by `kill`). */
  readonly root: string;
  #parts: LocalSandboxParts;
  #live = new Set<HostProcess>();
  #killed: Promise<void> | undefined;
  #reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(parts: LocalSandboxParts) {
    this.#parts = parts;
    this.id = parts.id;
    this.gatewayUrl = parts.gatewayUrl;
    this.workdir = parts.workdir;
    this.root = parts.layout.root;
    if (parts.lifetimeMs) {
      const reaper = setTimeout(() => void this.kill(), parts.lifetimeMs);
      Deno.unrefTimer(reaper as unknown as number);
      this.#reaper = reaper;
    }
  }

  /** The host path behind an inside path (writable mounts only; symlink escapes refused). */
  hostPath(path: string): Promise<string> {
    return hostPathOf(this.root, this.workdir, path);
  }

  #start(cmd: string, opts: ExecOpts): HostProcess {
    if (this.#killed) throw new SandboxError(`sandbox ${this.id} was killed`);
    const env = { ...this.#parts.env, ...opts.env };
    const argv = bwrapArgs(this.#parts.layout, cmd, opts.cwd ?? this.workdir, env);
    const proc = startHostProcess(argv, { PATH: "/usr/local/bin:/usr/bin:/bin" }, opts);
    this.#live.add(proc);
    proc.done.finally(() => this.#live.delete(proc));
    return proc;
  }

  exec(cmd: string, opts: ExecOpts = {}): Promise<ExecResult> {
    try {
      return this.#start(cmd, opts).done;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  spawn(cmd: string, opts: ExecOpts = {}): Promise<Proc> {
    try {
      const proc = this.#start(cmd, opts);
      return Promise.resolve({
        id: String(proc.pid),
        wait: () => proc.done,
        kill: () => proc.kill(),
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async writeFile(path: string, data: string | Uint8Array, opts: WriteFileOpts = {}) {
    this.#alive();
    const host = await this.hostPath(path);
    await Deno.mkdir(parentDir(host), { recursive: true });
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await Deno.writeFile(host, bytes, { mode: opts.mode ?? 0o644 });
    if (opts.mode !== undefined) await Deno.chmod(host, opts.mode);
  }

  async readFile(path: string): Promise<Uint8Array> {
    this.#alive();
    return await Deno.readFile(await this.hostPath(path));
  }

  #alive(): void {
    if (this.#killed) throw new SandboxError(`sandbox ${this.id} was killed`);
  }

  kill(): Promise<void> {
    this.#killed ??= (async () => {
      clearTimeout(this.#reaper);
      await Promise.all([...this.#live].map((p) => p.kill()));
      await Promise.all([...this.#live].map((p) => p.done.catch(() => {})));
      // Backstop: every bwrap process of this sandbox names its root on the command line.
      await killAllWithArg(`${this.root}/`);
      await this.#parts.socket?.close();
      await Deno.remove(this.root, { recursive: true }).catch(() => {});
    })();
    return this.#killed;
  }
}

/** Inside path of the sandbox's writable mounts, for callers that build commands. */
export const LOCAL_MOUNTS = INSIDE;
