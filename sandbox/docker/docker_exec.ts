/**
 * One command in a container through the Engine API: `POST /containers/{id}/exec`, then
 * `POST /exec/{id}/start` answering a raw stream (demultiplexed live into stdout/stderr), then
 * `GET /exec/{id}/json` for the exit code.
 *
 * The API cannot kill an exec, so the command runs under a small `sh` wrapper that starts it in
 * its own session (`setsid`, when the image has it) and records its PID in `/tmp/.rollgate`; a
 * timeout, an abort or `kill()` then runs a second exec that SIGKILLs that process group. Stdin
 * (the API would need a hijacked connection) is uploaded as a file first and redirected.
 *
 * @module
 */
import {
  DEFAULT_EXEC_TIMEOUT_MS,
  type ExecOpts,
  type ExecResult,
  TIMEOUT_EXIT_CODE,
} from "../sandbox.ts";
import type { DockerEngine } from "./engine_client.ts";
import { demuxRawStream } from "./raw_stream.ts";

/** Control directory inside the container (PID and stdin files). */
export const CONTROL_DIR = "/tmp/.rollgate";

/**
 * The wrapper: `$1` is the user's command, `$2` the key naming the PID / stdin files, `$3` the
 * working directory (a missing one is a failed command, exit 1, not an API error).
 */
const WRAPPER = [
  `d=${CONTROL_DIR}; mkdir -p "$d"`,
  `cd "$3" || exit 1`,
  `if [ -f "$d/$2.stdin" ]; then exec 3<"$d/$2.stdin"; else exec 3</dev/null; fi`,
  `if command -v setsid >/dev/null 2>&1; then setsid /bin/sh -c "$1" <&3 3<&- & ` +
  `else /bin/sh -c "$1" <&3 3<&- & fi`,
  `echo $! > "$d/$2.pid"; wait $!; code=$?; rm -f "$d/$2.pid" "$d/$2.stdin"; exit $code`,
].join("\n");

/** Kills the wrapped command `$1` (its process group, else the process). */
const KILLER =
  `p=${CONTROL_DIR}/$1.pid; i=0; while [ ! -f "$p" ] && [ $i -lt 20 ]; do sleep 0.05; ` +
  `i=$((i+1)); done; [ -f "$p" ] || exit 0; pid=$(cat "$p"); ` +
  `kill -KILL "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null; exit 0`;

/** A started exec. */
export interface DockerExec {
  readonly id: string;
  readonly done: Promise<ExecResult>;
  kill(): Promise<void>;
}

/** What the exec needs from its sandbox. */
export interface ExecContext {
  engine: DockerEngine;
  containerId: string;
  env: Record<string, string>;
  workdir: string;
  /** Uploads a file into the container (stdin). */
  putFile(path: string, data: Uint8Array): Promise<void>;
}

function envList(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

async function createExec(
  ctx: ExecContext,
  cmd: string[],
  env: Record<string, string>,
) {
  const created = await ctx.engine.json<{ Id: string }>(
    "POST",
    `/containers/${ctx.containerId}/exec`,
    {
      json: {
        Cmd: cmd,
        AttachStdout: true,
        AttachStderr: true,
        Env: envList(env),
        WorkingDir: "/",
      },
    },
  );
  return created.Id;
}

async function exitCodeOf(ctx: ExecContext, execId: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const info = await ctx.engine.json<{ Running: boolean; ExitCode: number | null }>(
      "GET",
      `/exec/${execId}/json`,
    );
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 20));
  }
  return -1;
}

/** Starts `cmd` in the container and streams its output. */
export async function startDockerExec(
  ctx: ExecContext,
  cmd: string,
  opts: ExecOpts,
): Promise<DockerExec> {
  const key = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
  if (opts.stdin !== undefined) {
    const data = typeof opts.stdin === "string" ? new TextEncoder().encode(opts.stdin) : opts.stdin;
    await ctx.putFile(`${CONTROL_DIR}/${key}.stdin`, data);
  }
  const env = { ...ctx.env, ...opts.env };
  const cwd = opts.cwd ?? ctx.workdir;
  const argv = ["/bin/sh", "-c", WRAPPER, "rollgate", cmd, key, cwd];
  const execId = await createExec(ctx, argv, env);
  const res = await ctx.engine.request("POST", `/exec/${execId}/start`, {
    json: { Detach: false, Tty: false },
    timeoutMs: 0,
  });
  let timedOut = false;
  let killing: Promise<void> | undefined;
  let finished = false;
  const kill = () => {
    if (finished) return Promise.resolve();
    killing ??= (async () => {
      const killer = await createExec(ctx, ["/bin/sh", "-c", KILLER, "rollgate", key], {});
      await ctx.engine.call("POST", `/exec/${killer}/start`, {
        json: { Detach: false, Tty: false },
      });
    })().catch(() => {/* the container is gone: so is the command */});
    return killing;
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, opts.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS);
  const onAbort = () => kill();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  if (opts.signal?.aborted) kill();

  const decoders = [new TextDecoder(), new TextDecoder()];
  const text = ["", ""];
  const emit = (i: number, chunk: string) => {
    if (!chunk) return;
    text[i] += chunk;
    try {
      (i === 0 ? opts.onStdout : opts.onStderr)?.(chunk);
    } catch { /* a listener's bug must not lose the output */ }
  };
  const done = (async (): Promise<ExecResult> => {
    try {
      await demuxRawStream(res.body!, (stream, payload) => {
        const i = stream === 2 ? 1 : 0;
        emit(i, decoders[i].decode(payload, { stream: true }));
      });
    } catch { /* the connection dropped (container killed): report what arrived */ }
    emit(0, decoders[0].decode());
    emit(1, decoders[1].decode());
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
    const code = await exitCodeOf(ctx, execId).catch(() => 137);
    finished = true;
    await killing;
    return {
      exitCode: timedOut ? TIMEOUT_EXIT_CODE : code,
      stdout: text[0],
      stderr: text[1],
      timedOut,
    };
  })();
  return {
    id: execId,
    done,
    async kill() {
      await kill();
      await done;
    },
  };
}
