/**
 * Load driver: what the gateway's HTTP server costs a request, against plain `node:http` and
 * `Deno.serve` doing the same exchange. Each server runs in its own process and serves a driver
 * in this one: POSTs of about 1 kB and about 600 kB (a 128k-token history), each read whole and
 * answered with a short event stream (a comment at once, the events a tick later, as
 * `sseResponse` writes an answer). Reported: the server process's CPU per request (user +
 * system, all its threads), by body size.
 *
 *   - `node:http`: the bare module, the body collected from its `data` events, written with
 *     `write`/`end`: no timeouts, caps or fetch `Request`.
 *   - `serveHttp`: the gateway's server (`gateway/http`: timeouts, caps, a fetch `Request`, a web
 *     stream answer) with `readBodyBytes`, as the agent routes read.
 *   - `Deno.serve`: the runtime's server, `request.bytes()`.
 *
 *     deno run -A bench/http_server_cost.ts [--rounds 3] [--small 600] [--large 300] [--checkout DIR] \
 *       [--only node:http|serveHttp|Deno.serve]
 *
 * `--checkout DIR` adds `serveHttp` of another checkout (its `gateway/http`), the rounds taking
 * turns between the servers so that all see the machine alike.
 *
 * @module
 */
import http from "node:http";
import process from "node:process";

function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}

const ROUNDS = Number(flag("rounds") ?? 3);
const SMALL = Number(flag("small") ?? 600);
const LARGE = Number(flag("large") ?? 300);
const HERE = new URL("..", import.meta.url).pathname;

/** The answer: one comment now, the events a tick later (what an SSE turn writes). */
const EVENTS = new TextEncoder().encode(
  'data: {"choices":[{"delta":{"content":"ok"}}]}\n\n'.repeat(8),
);
const COMMENT = new TextEncoder().encode(": rollgate\n\n");

async function serve(kind: string, port: number, checkout: string): Promise<void> {
  let cpu0 = process.cpuUsage(), served = 0;
  /** `GET /reset` starts the count, `GET /cpu` reads it. */
  const meter = (path: string) => {
    if (path === "/reset") (cpu0 = process.cpuUsage()), (served = 0);
    const u = process.cpuUsage(cpu0);
    return JSON.stringify({ served, ms: (u.user + u.system) / 1000 });
  };
  const stream = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(COMMENT);
        setTimeout(() => (c.enqueue(EVENTS), c.close()), 0);
      },
    });
  const sse = { "content-type": "text/event-stream" };
  if (kind === "node:http") {
    http.createServer((req, res) => {
      if (req.method !== "POST") return void res.end(meter(req.url ?? ""));
      const pieces: Uint8Array[] = [];
      req.on("data", (p) => pieces.push(p));
      req.on("end", () => {
        served++;
        res.writeHead(200, sse);
        res.write(COMMENT);
        setTimeout(() => res.end(EVENTS), 0);
      });
    }).listen(port, "127.0.0.1");
  } else if (kind === "Deno.serve") {
    Deno.serve({ hostname: "127.0.0.1", port, onListen() {} }, async (req) => {
      if (req.method !== "POST") return new Response(meter(new URL(req.url).pathname));
      await req.bytes();
      served++;
      return new Response(stream(), { headers: sse });
    });
  } else {
    const { serveHttp, readBodyBytes } = await import(`${checkout}/gateway/http/mod.ts`);
    await serveHttp(async (req: Request) => {
      if (req.method !== "POST") return new Response(meter(new URL(req.url).pathname));
      await readBodyBytes(req, 1 << 26);
      served++;
      return new Response(stream(), { headers: sse });
    }, { hostname: "127.0.0.1", port });
  }
}

if (flag("serve")) {
  await serve(flag("serve")!, Number(flag("port")), flag("from") ?? HERE);
} else {
  const servers: [string, string][] = [
    ["node:http", HERE],
    ["serveHttp", HERE],
    ["Deno.serve", HERE],
  ];
  if (flag("checkout")) servers.push(["serveHttp", flag("checkout")!]);
  const only = flag("only");
  if (only) servers.splice(0, servers.length, ...servers.filter(([kind]) => kind === only));
  const body = (kB: number) =>
    JSON.stringify({
      messages: Array.from(
        { length: kB },
        (_, i) => ({ role: "tool", content: `${"x".repeat(990)}${i}` }),
      ),
    });
  const bodies = { small: body(1), large: body(600) };
  console.log(
    `bodies: ${bodies.small.length} and ${bodies.large.length} bytes; load ${
      Deno.loadavg().join(" ")
    }`,
  );
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [kind, from] of servers) {
      const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = (listener.addr as Deno.NetAddr).port;
      listener.close();
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL(import.meta.url).pathname,
          "--serve",
          kind,
          "--port",
          `${port}`,
          "--from",
          from,
        ],
        stdin: "null",
      }).spawn();
      const url = `http://127.0.0.1:${port}`;
      const deadline = Date.now() + 60_000;
      while (!(await fetch(`${url}/reset`).then((r) => r.text(), () => ""))) {
        if (Date.now() > deadline) throw new Error(`${kind} did not start`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const perRequest: string[] = [];
      for (const [size, n] of [["small", SMALL], ["large", LARGE]] as const) {
        for (let k = 0; k < 20; k++) {
          await (await fetch(url, { method: "POST", body: bodies[size] })).text();
        }
        await (await fetch(`${url}/reset`)).text();
        for (let k = 0; k < n; k++) {
          await (await fetch(url, { method: "POST", body: bodies[size] })).text();
        }
        const { served, ms } = JSON.parse(await (await fetch(`${url}/cpu`)).text());
        perRequest.push(`${size} ${(ms / served).toFixed(3)} ms`);
      }
      child.kill("SIGTERM");
      await child.status;
      const who = from === HERE ? kind : `${kind} (${from})`;
      console.log(
        `round ${round}: ${who}: server CPU per request: ${perRequest.join(", ")}; load ${
          Deno.loadavg()[0].toFixed(2)
        }`,
      );
    }
  }
}
