/**
 * The gateway as a user runs it, for load drivers: `main.ts serve` (what `npm start` runs) in its
 * own process on a free loopback port, with its journal on in a fresh temporary data directory
 * (unless `--no-journal` is among the flags), ready once `/ready` answers 200. The driver reads the
 * process's memory and CPU from `/proc`, so what it reports is the gateway's own.
 *
 * @module
 */

export interface GatewayProcess {
  url: string;
  pid: number;
  /** The journal's directory (removed by `stop`), or undefined with `--no-journal`. */
  dataDir?: string;
  /** Resident set size now, in bytes. */
  rss(): number;
  /** CPU seconds (user + system) of the process so far, or of one thread (`task/<tid>`). */
  cpuSeconds(task?: string): number;
  /** CPU seconds per thread name (the event loop's thread carries the process's name). */
  cpuByThread(): Map<string, number>;
  /** SIGTERM, then SIGKILL after 10 s; removes the data directory. */
  stop(): Promise<void>;
}

export interface GatewayProcessOptions {
  /** `serve` flags after the port and data directory (e.g. `["--no-journal"]`). */
  serveFlags?: string[];
  /**
   * The checkout whose `main.ts` runs (default: this one), to measure an earlier release side by
   * side. A checkout without a journal or `/ready` (before issue 8) needs `journal: false` and
   * `readyPath: "/health"`.
   */
  checkout?: string;
  /** Give the gateway a fresh `--data-dir` (default: unless `--no-journal` is a serve flag). */
  journal?: boolean;
  /** What answers 200 once the gateway serves (default `/ready`). */
  readyPath?: string;
  /**
   * `deno run` flags before the script (e.g. `--inspect=…`), after the V8 flags that the
   * checkout's `npm start` passes (read from its `package.json`, so a bench runs what users run; a
   * later `--v8-flags` here overrides them).
   */
  denoFlags?: string[];
  env?: Record<string, string>;
  /**
   * Pass the V8 flags of the checkout's `npm start` (default); false runs `deno run -A main.ts
   * serve` with none, as `--help` shows it.
   */
  startFlags?: boolean;
  /** Longest wait for `/ready`. */
  readyTimeoutMs?: number;
}

const CHECKOUT = new URL("..", import.meta.url).pathname;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** A port nobody listens on now (the kernel's pick, released at once). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** CPU seconds (user + system) of `/proc/<path>/stat`. */
export function procCpuSeconds(path: string | number): number {
  const stat = Deno.readTextFileSync(`/proc/${path}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** The `--v8-flags=…` that a checkout's `npm start` script passes to Deno (none before issue 20). */
export async function startV8Flags(checkout: string): Promise<string[]> {
  const pkg = JSON.parse(await Deno.readTextFile(`${checkout}/package.json`));
  const start: string = pkg.scripts?.start ?? "";
  return start.split(/\s+/).filter((word) => word.startsWith("--v8-flags="));
}

/** Starts `main.ts serve` and waits until it is ready. */
export async function startGatewayProcess(
  options: GatewayProcessOptions = {},
): Promise<GatewayProcess> {
  const serveFlags = options.serveFlags ?? [];
  const journal = options.journal ?? !serveFlags.includes("--no-journal");
  const dataDir = journal ? await Deno.makeTempDir({ prefix: "rollgate-bench-" }) : undefined;
  const checkout = options.checkout ?? CHECKOUT;
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...(options.startFlags === false ? [] : await startV8Flags(checkout)),
      ...(options.denoFlags ?? []),
      `${checkout}/main.ts`,
      "serve",
      "--port",
      String(port),
      ...(dataDir ? ["--data-dir", dataDir] : []),
      ...serveFlags,
    ],
    env: options.env,
    cwd: checkout,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  const pid = child.pid;
  const exited = child.status.then((s) => s);
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const killer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }, 10_000);
    await exited;
    clearTimeout(killer);
    if (dataDir) await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 120_000);
  for (;;) {
    const status = await Promise.race([exited, new Promise((r) => setTimeout(r, 100))]);
    if (status) {
      throw new Error(`the gateway exited before it was ready: ${JSON.stringify(status)}`);
    }
    const ready = await fetch(`${url}${options.readyPath ?? "/ready"}`, {
      signal: AbortSignal.timeout(5_000),
    })
      .then(async (r) => (await r.body?.cancel(), r.ok), () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the gateway was not ready within ${options.readyTimeoutMs ?? 120_000} ms`);
    }
  }
  return { url, pid, dataDir, ...procStats(pid), stop };
}

/** Memory and CPU of a running process, read from `/proc`. */
export function procStats(pid: number): Pick<GatewayProcess, "rss" | "cpuSeconds" | "cpuByThread"> {
  return {
    rss() {
      const status = Deno.readTextFileSync(`/proc/${pid}/status`);
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
      return kb * 1024;
    },
    cpuSeconds: (task) => procCpuSeconds(task ? `${pid}/${task}` : pid),
    cpuByThread() {
      const byName = new Map<string, number>();
      for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
        try {
          const name = Deno.readTextFileSync(`/proc/${pid}/task/${task.name}/comm`).trim();
          byName.set(name, (byName.get(name) ?? 0) + procCpuSeconds(`${pid}/task/${task.name}`));
        } catch {
          // the thread ended meanwhile
        }
      }
      return byName;
    },
  };
}
