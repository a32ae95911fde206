/**
 * HAProxy (Debian's `haproxy`) in front of test gateways, with the configuration the repository
 * ships for users (`deploy/haproxy/rollgate.cfg`): the test only puts its own port in the `bind`
 * line and its replicas in place of the example `server` lines.
 *
 * @module
 */

const ROOT = new URL("../../", import.meta.url).pathname;
export const HAPROXY_CONFIG = ROOT + "deploy/haproxy/rollgate.cfg";

export interface Haproxy {
  url: string;
  stop(): Promise<void>;
  output(): string;
}

/** Why HAProxy tests cannot run here; undefined when they can. */
export function haproxyMissing(): string | undefined {
  for (const dir of ["/usr/sbin", "/usr/bin", "/usr/local/sbin"]) {
    try {
      Deno.statSync(`${dir}/haproxy`);
      return undefined;
    } catch { /* not there */ }
  }
  return "no haproxy (apt-get install haproxy)";
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Starts HAProxy balancing over `replicas` (`host:port` each) on a free loopback port. */
export async function startHaproxy(replicas: string[]): Promise<Haproxy> {
  const port = freePort();
  const shipped = await Deno.readTextFile(HAPROXY_CONFIG);
  const servers = replicas.map((r, i) => `    server replica${i + 1} ${r} check`).join("\n");
  let placed = false;
  const config = shipped
    .replace(/^\s*bind .*$/m, `    bind 127.0.0.1:${port}`)
    .split("\n")
    .flatMap((line) => {
      if (!/^\s*server /.test(line)) return [line];
      if (placed) return [];
      placed = true;
      return [servers];
    })
    .join("\n");
  const dir = await Deno.makeTempDir({ prefix: "rollgate-haproxy-" });
  await Deno.writeTextFile(`${dir}/rollgate.cfg`, config);
  const child = new Deno.Command("haproxy", {
    args: ["-db", "-f", `${dir}/rollgate.cfg`],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let log = "";
  const pump = async (s: ReadableStream<Uint8Array>) => {
    for await (const chunk of s.pipeThrough(new TextDecoderStream())) log += chunk;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  // Up once it answers for every replica (servers start up; a failing check takes one out).
  for (;;) {
    const up = await Promise.all(
      replicas.map(() =>
        fetch(`${url}/ready`).then(async (r) => (await r.body?.cancel(), r.ok)).catch(() => false)
      ),
    );
    if (up.every(Boolean)) break;
    if (Date.now() > deadline) {
      try {
        child.kill();
      } catch { /* it ended: its output says why */ }
      await pumps;
      throw new Error(`haproxy did not come up:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    output: () => log,
    async stop() {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
      await pumps;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
