/**
 * A loopback HTTP proxy that refuses everything and remembers what was asked of it. Pointing a
 * CLI's `HTTPS_PROXY` / `HTTP_PROXY` / `ALL_PROXY` at it (with `NO_PROXY` for loopback) makes any
 * attempt to reach the outside visible as a recorded request line instead of a silent connection.
 * Best effort: a client that ignores proxy variables is not caught.
 *
 * @module
 */

export interface EgressProbe {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** First request lines seen, e.g. `CONNECT api.anthropic.com:443 HTTP/1.1`. */
  attempts: string[];
  /** Proxy variables pointing at the probe, loopback exempt. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

const REFUSAL = "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";

async function refuse(conn: Deno.Conn, attempts: string[]): Promise<void> {
  try {
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    if (n) attempts.push(new TextDecoder().decode(buf.subarray(0, n)).split("\r\n")[0]);
    await conn.write(new TextEncoder().encode(REFUSAL));
  } catch {
    /* client went away */
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

export function startEgressProbe(): EgressProbe {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
  const attempts: string[] = [];
  const open = new Set<Promise<void>>();
  const loop = (async () => {
    try {
      for await (const conn of listener) {
        const p = refuse(conn, attempts).finally(() => open.delete(p));
        open.add(p);
      }
    } catch { /* listener closed */ }
  })();
  return {
    url,
    attempts,
    env: () => ({
      HTTPS_PROXY: url,
      HTTP_PROXY: url,
      ALL_PROXY: url,
      https_proxy: url,
      http_proxy: url,
      all_proxy: url,
      NO_PROXY: "127.0.0.1,localhost",
      no_proxy: "127.0.0.1,localhost",
    }),
    async close() {
      try {
        listener.close();
      } catch { /* already closed */ }
      await loop;
      await Promise.all(open);
    },
  };
}
