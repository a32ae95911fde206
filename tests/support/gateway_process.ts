/**
 * Starts `main.ts serve` as a real child process on a free loopback port, for tests that talk
 * to the gateway over real sockets. Each gateway journals into its own temporary data directory
 * (removed by `stop`) unless the arguments name one or turn the journal off; `kill` and
 * `restart` let crash tests kill it (SIGKILL) and start it again on the same port and directory.
 *
 * @module
 */

const ROOT = new URL("../../", import.meta.url).pathname;
export const DENO = ROOT + "node_modules/.bin/deno";

export interface GatewayProcess {
  url: string;
  port: number;
  /** The running gateway's process id. */
  readonly pid: number;
  /** Everything the gateway printed so far (across restarts). */
  output(): string;
  /**
   * Sends `signal` (default SIGTERM: a drain) and resolves once the process ended, its output
   * fully read.
   */
  kill(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
  /** How the running process ends, once it has (its output fully read by then). */
  readonly exited: Promise<Deno.CommandStatus>;
  /** Starts the gateway again with the same port, arguments and data directory. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A loopback port nothing listens on now. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

export async function startGateway(
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<GatewayProcess> {
  const port = freePort();
  const ownDir =
    args.includes("--data-dir") || args.includes("--no-journal") || args.includes("--database-url")
      ? null
      : await Deno.makeTempDir({ prefix: "rollgate-data-" });
  const fullArgs = [
    "run",
    "-A",
    ROOT + "main.ts",
    "serve",
    "--port",
    String(port),
    ...(ownDir ? ["--data-dir", ownDir] : []),
    ...args,
  ];
  const url = `http://127.0.0.1:${port}`;
  let log = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s.pipeThrough(new TextDecoderStream())) log += chunk;
  };
  let child!: Deno.ChildProcess;
  let exited!: Promise<Deno.CommandStatus>;
  const launch = async () => {
    child = new Deno.Command(DENO, {
      args: fullArgs,
      cwd: ROOT,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
    exited = Promise.all([child.status, pumps]).then(([status]) => status);
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const r = await fetch(url + "/ready", { signal: AbortSignal.timeout(5_000) });
        await r.body?.cancel();
        if (r.ok) return;
      } catch { /* not up yet */ }
      if (Date.now() > deadline) {
        try {
          child.kill();
        } catch { /* already gone */ }
        throw new Error(`gateway did not start:\n${log}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async (signal: Deno.Signal = "SIGTERM") => {
    try {
      child.kill(signal);
    } catch { /* already gone */ }
    return await exited;
  };
  await launch();
  return {
    url,
    port,
    get pid() {
      return child.pid;
    },
    output: () => log,
    kill,
    get exited() {
      return exited;
    },
    restart: launch,
    async stop() {
      await kill("SIGKILL"); // the journal survives it; a drain would wait for open turns
      if (ownDir) await Deno.remove(ownDir, { recursive: true }).catch(() => {});
    },
  };
}
