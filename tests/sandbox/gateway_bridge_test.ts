/**
 * The sandbox ↔ gateway bridge: per-rollout Unix socket, request rewriting (Deno's
 * `http+unix://` URLs, bare `/v1` paths, other rollouts and `/api` refused), and, through a real
 * local sandbox, a JSON POST and a live SSE stream to a small Hono app while the outside network
 * (host loopback included) stays unreachable.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { LocalProvider, rolloutSocketHandler, serveRolloutSocket } from "../../sandbox/mod.ts";
import { entries, exists } from "./support/leaks.ts";

const NO_BWRAP = await localSandboxMissing();

/** A stand-in for the gateway: echo, SSE, and a route that reports what it saw. */
function app(release?: Promise<void>): Hono {
  const a = new Hono();
  a.get(
    "/rollout/:id/v1/whoami",
    (c) => c.json({ id: c.req.param("id"), url: c.req.url, path: new URL(c.req.url).pathname }),
  );
  a.post(
    "/rollout/:id/v1/echo",
    async (c) => c.json({ id: c.req.param("id"), body: await c.req.json() }),
  );
  a.get("/rollout/:id/v1/events", (c) =>
    streamSSE(c, async (stream) => {
      await stream.writeSSE({ event: "message", data: "one" });
      await release; // the host releases this only after the sandbox has printed "one"
      await stream.writeSSE({ event: "message", data: "two" });
      await stream.writeSSE({ event: "done", data: "[DONE]" });
    }));
  a.get("/api/rollouts", (c) => c.json({ secret: true }));
  return a;
}

Deno.test("bridge: Hono routes http+unix:// URLs on the pathname", async () => {
  const res = await app().fetch(new Request("http+unix://%2Ftmp%2Fgw.sock/rollout/r1/v1/whoami"));
  assert.equal(res.status, 200);
  assert.equal((await res.json()).id, "r1");
});

Deno.test("bridge: requests are rewritten and confined to the rollout", async () => {
  const h = rolloutSocketHandler("r 1", app().fetch);
  const get = async (url: string, init?: RequestInit) => {
    const res = await h(new Request(url, init));
    return { status: res.status, body: await res.json() };
  };
  const bare = await get("http+unix://127.0.0.1:8787/v1/whoami?x=1", {
    headers: { host: "127.0.0.1:8787" },
  });
  assert.deepEqual(bare, {
    status: 200,
    body: {
      id: "r 1",
      url: "http://127.0.0.1:8787/rollout/r%201/v1/whoami?x=1",
      path: "/rollout/r%201/v1/whoami",
    },
  });
  const prefixed = await get("http+unix://%2Fs.sock/rollout/r%201/v1/whoami");
  assert.equal(prefixed.body.url, "http://localhost/rollout/r%201/v1/whoami");
  const post = await get("http+unix://x/v1/echo", { method: "POST", body: '{"a":1}' });
  assert.deepEqual(post.body, { id: "r 1", body: { a: 1 } });
  const other = await get("http+unix://x/rollout/r2/v1/whoami");
  assert.equal(other.status, 403);
  assert.equal(other.body.error.type, "permission_error");
  assert.equal((await get("http+unix://x/api/rollouts")).status, 404);
  assert.equal((await get("http+unix://x/rollout/r%201/../../api/rollouts")).status, 404);
});

Deno.test("bridge: serveRolloutSocket serves over the socket and removes it on close", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rollgate-test-" });
  const sock = serveRolloutSocket({ path: `${dir}/r.sock`, rolloutId: "r9", fetch: app().fetch });
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: sock.path } });
  try {
    const res = await fetch("http://127.0.0.1:8787/v1/whoami", { client });
    assert.deepEqual(await res.json(), {
      id: "r9",
      url: "http://127.0.0.1:8787/rollout/r9/v1/whoami",
      path: "/rollout/r9/v1/whoami",
    });
  } finally {
    client.close();
    await sock.close();
    await sock.close();
  }
  assert.equal(await exists(sock.path), false);
  await Deno.remove(dir);
});

const CLIENT = `
import http.client, json, socket, sys
def conn():
    return http.client.HTTPConnection("127.0.0.1", 8787, timeout=20)
c = conn()
c.request("POST", "/v1/echo", body=json.dumps({"q": "ping"}), headers={"content-type": "application/json"})
r = c.getresponse()
print("echo", r.status, r.read().decode(), flush=True)
c = conn()
c.request("GET", sys.argv[1])
r = c.getresponse()
print("sse", r.status, r.getheader("content-type"), flush=True)
while True:
    line = r.readline()
    if not line:
        break
    line = line.decode().rstrip("\\n")
    if line.startswith("data:"):
        print(line, flush=True)
for host in ["127.0.0.1", sys.argv[2]]:
    try:
        socket.create_connection((host, int(sys.argv[3])), timeout=2)
        print("reached", host, flush=True)
    except OSError as e:
        print("unreachable", host, flush=True)
try:
    socket.getaddrinfo("example.com", 80)
    print("dns ok")
except OSError:
    print("dns failed")
`;
import { localSandboxMissing, skipGroup } from "../support/skips.ts";

function hostAddress(): string {
  const ip = Deno.networkInterfaces().find((i) =>
    i.family === "IPv4" && !i.address.startsWith("127.")
  );
  return ip?.address ?? "10.255.255.1";
}

Deno.test({
  name: "bridge: JSON and live SSE through a sandbox; outside unreachable",
  ignore: skipGroup("gateway bridge in a local sandbox", NO_BWRAP),
}, async () => {
  const tempDir = await Deno.makeTempDir({ prefix: "rollgate-test-" });
  const listener = Deno.listen({ hostname: "0.0.0.0", port: 0 });
  let outsideConnections = 0;
  const accepting = (async () => {
    for await (const conn of listener) {
      outsideConnections++;
      conn.close();
    }
  })();
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const provider = new LocalProvider({ tempDir });
  const sbx = await provider.create({
    image: "local",
    gateway: { rolloutId: "r-sse", fetch: app(released).fetch },
  });
  try {
    assert.equal(sbx.gatewayUrl, "http://127.0.0.1:8787");
    await sbx.writeFile("/tmp/client.py", CLIENT);
    let sawOne = false;
    const r = await sbx.exec(
      `python3 /tmp/client.py /rollout/r-sse/v1/events ${hostAddress()} ${listener.addr.port}`,
      {
        timeoutMs: 30_000,
        onStdout(chunk) {
          if (!sawOne && chunk.includes("data: one")) {
            sawOne = true;
            release();
          }
        },
      },
    );
    assert.equal(r.exitCode, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.deepEqual(lines, [
      'echo 200 {"id":"r-sse","body":{"q":"ping"}}',
      "sse 200 text/event-stream",
      "data: one",
      "data: two",
      "data: [DONE]",
      "unreachable 127.0.0.1",
      `unreachable ${hostAddress()}`,
      "dns failed",
    ]);
    assert.ok(sawOne, "the first event reached the host while the stream was still open");
    assert.equal(outsideConnections, 0);
  } finally {
    await sbx.kill();
    listener.close();
    await accepting.catch(() => {});
  }
  assert.deepEqual(await entries(tempDir), []);
  await Deno.remove(tempDir);
});
