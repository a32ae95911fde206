/**
 * Starts `main.ts serve` as a real child process on a free loopback port, for tests that talk
 * to the gateway over real sockets.
 *
 * @module
 */

const ROOT = new URL("../../", import.meta.url).pathname;
export const DENO = ROOT + "node_modules/.bin/deno";

export interface GatewayProcess {
  url: string;
  port: number;
  /** Everything the gateway printed so far. */
  output(): string;
  /** Sends the process a signal (e.g. SIGTERM to drain it). */
  kill(signal: Deno.Signal): void;
  /** How the process ended, once it has (its output fully read by then). */
  exited: Promise<Deno.CommandStatus>;
  stop(): Promise<void>;
}

function freePort(): number {
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
  const child = new Deno.Command(DENO, {
    args: ["run", "-A", ROOT + "main.ts", "serve", "--port", String(port), ...args],
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s.pipeThrough(new TextDecoderStream())) log += chunk;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const exited = Promise.all([child.status, pumps]).then(([status]) => status);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(url + "/ready");
      await r.body?.cancel();
      if (r.ok) break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`gateway did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    output: () => log,
    kill: (signal) => child.kill(signal),
    exited,
    async stop() {
      try {
        child.kill();
      } catch { /* already gone */ }
      await child.status;
      await pumps;
    },
  };
}
