/**
 * The sandbox contract every backend implements (local bubblewrap, Docker Engine API, E2B).
 *
 * A {@link SandboxProvider} checks its prerequisites once ({@link SandboxProvider.preflight}) and
 * creates sandboxes; a {@link Sandbox} runs shell commands (foreground or streamed background),
 * moves files in and out, and is torn down with {@link Sandbox.kill}. Commands are shell strings
 * run by the sandbox's shell in the working directory (default `/workspace`).
 *
 * Rules every backend keeps:
 * - `exec` never throws because a command failed: a non-zero exit, a timeout or a kill is an
 *   {@link ExecResult}. It throws only when the sandbox itself is unusable (killed, unreachable).
 * - Every command has a time budget (default {@link DEFAULT_EXEC_TIMEOUT_MS}); on expiry the command
 *   and everything it started are killed and `timedOut` is set.
 * - `kill()` is idempotent and leaves nothing behind (processes, temp dirs, sockets, containers).
 *
 * @module
 */

/** Budget of one command when `ExecOpts.timeoutMs` is not given: 10 minutes. */
export const DEFAULT_EXEC_TIMEOUT_MS = 600_000;

/** Exit code reported for a command that hit its time budget (as coreutils `timeout`). */
export const TIMEOUT_EXIT_CODE = 124;

/** Default working directory inside every sandbox. */
export const DEFAULT_WORKDIR = "/workspace";

/** A `fetch`-style handler: the gateway's HTTP surface (e.g. `gateway.app.fetch`). */
export type FetchHandler = (request: Request) => Response | Promise<Response>;

/** How the agent in a sandbox reaches the gateway. */
export interface GatewayAccess {
  /** The rollout whose calls this sandbox makes; the bridge confines requests to it. */
  rolloutId: string;
  /**
   * Local bridge: the gateway handler, served on a per-rollout Unix socket that is forwarded to
   * `127.0.0.1:<port>` inside an otherwise offline sandbox (local and Docker backends).
   */
  fetch?: FetchHandler;
  /** A URL the sandbox can reach by itself (cloud backends: public or tunnelled HTTPS). */
  url?: string;
}

/** What to create. Backends ignore fields they cannot honour and document which. */
export interface SandboxSpec {
  /** E2B template | Docker image | `"local"` for the bubblewrap backend (host's `/usr`). */
  image: string;
  /** Environment of every command (merged under `ExecOpts.env`). */
  env?: Record<string, string>;
  /** Working directory of every command; default {@link DEFAULT_WORKDIR}. */
  workdir?: string;
  /** Hard lifetime: the sandbox kills itself after this long. */
  lifetimeMs?: number;
  /** Labels (rollout id, task id): E2B metadata, Docker labels. */
  labels?: Record<string, string>;
  /**
   * `"none"`: no network at all (grading). `"gateway-only"` (default when `gateway` is set): only
   * the gateway. `"full"`: the host's network (local: shared netns).
   */
  network?: "none" | "gateway-only" | "full";
  /** The gateway connection; without it the sandbox has no gateway. */
  gateway?: GatewayAccess;
  resources?: { cpu?: number; memoryMiB?: number };
}

/** Options of one command. */
export interface ExecOpts {
  /** Working directory inside the sandbox; default the spec's `workdir`. */
  cwd?: string;
  /** Extra environment for this command. */
  env?: Record<string, string>;
  /** Budget; default {@link DEFAULT_EXEC_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Data for the command's stdin; without it stdin is empty (`/dev/null`). */
  stdin?: string | Uint8Array;
  /** Called with each decoded stdout chunk as it arrives. */
  onStdout?(chunk: string): void;
  /** Called with each decoded stderr chunk as it arrives. */
  onStderr?(chunk: string): void;
  /** Aborting kills the command (the result has the kill's exit code, `timedOut` false). */
  signal?: AbortSignal;
}

/** Outcome of one command. */
export interface ExecResult {
  /** The command's exit code; 128+n after signal n; {@link TIMEOUT_EXIT_CODE} after a timeout. */
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** A background command. */
export interface Proc {
  readonly id: string;
  /** Resolves when the command ends; never rejects because of its exit code. */
  wait(): Promise<ExecResult>;
  /** Kills the command and everything it started; idempotent. */
  kill(): Promise<void>;
}

/** Options of {@link Sandbox.writeFile}. */
export interface WriteFileOpts {
  /** File mode, e.g. `0o755`; default `0o644`. */
  mode?: number;
}

/** One isolated machine-like environment. */
export interface Sandbox {
  readonly id: string;
  /** The provider that made it. */
  readonly provider: string;
  /**
   * `scheme://host:port` of the gateway as seen from inside (the harness's `gatewayUrl`); the
   * agent's base URL is `${gatewayUrl}/rollout/<id>`. Empty when the sandbox has no gateway.
   */
  readonly gatewayUrl: string;
  /** The working directory commands start in. */
  readonly workdir: string;
  /** Runs a shell command to completion. Never throws on a non-zero exit. */
  exec(cmd: string, opts?: ExecOpts): Promise<ExecResult>;
  /** Starts a shell command in the background, streaming its output to the callbacks. */
  spawn(cmd: string, opts?: ExecOpts): Promise<Proc>;
  /** Writes a file (parent directories created). Relative paths are relative to `workdir`. */
  writeFile(path: string, data: string | Uint8Array, opts?: WriteFileOpts): Promise<void>;
  /** Reads a file. Relative paths are relative to `workdir`. */
  readFile(path: string): Promise<Uint8Array>;
  /** Tears everything down; idempotent, also called by the lifetime reaper. */
  kill(): Promise<void>;
}

/** A backend. */
export interface SandboxProvider {
  /** `"local"` | `"docker"` | `"e2b"`. */
  readonly name: string;
  /** Credentials, binaries and reachability, with a short timeout; throws one clear error. */
  preflight(): Promise<void>;
  create(spec: SandboxSpec): Promise<Sandbox>;
}

/** A sandbox-level failure (not a failing command): unusable sandbox, unreachable backend. */
export class SandboxError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SandboxError";
  }
}

/** The network mode a spec asks for, with the default filled in. */
export function networkMode(spec: SandboxSpec): "none" | "gateway-only" | "full" {
  return spec.network ?? (spec.gateway ? "gateway-only" : "none");
}
