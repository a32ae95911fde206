/**
 * `serve` on an address others can reach, over real sockets: it refuses to start without a long
 * admin token, refuses what a web page of another site (or a DNS-rebound name) sends, takes only
 * JSON bodies on `/api`, and writes an access log without tokens or bodies when asked to.
 */
import assert from "node:assert/strict";
import { DENO, startGateway } from "../support/gateway_process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const ADMIN = "deploy-test-admin-token-0123456789";

async function serveExitsWith(args: string[], env: Record<string, string>) {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = String((probe.addr as Deno.NetAddr).port);
  probe.close();
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", ROOT + "main.ts", "serve", "--port", port, ...args],
    env: { ROLLGATE_ADMIN_TOKEN: "", ROLLGATE_HOST: "", ...env },
    stdin: "null",
    signal: AbortSignal.timeout(60_000),
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("serve refuses a public address without a long admin token, before binding it", async () => {
  for (
    const [args, env] of [
      [["--host", "0.0.0.0"], {}],
      [[], { ROLLGATE_HOST: "::" }],
      [["--host", "0.0.0.0"], { ROLLGATE_ADMIN_TOKEN: "short" }],
    ] as const
  ) {
    const { code, stderr } = await serveExitsWith([...args], env);
    assert.equal(code, 1, stderr);
    assert.match(stderr, /^rollgate: refusing to listen on (0\.0\.0\.0|::)/m);
    assert.match(stderr, env.ROLLGATE_ADMIN_TOKEN ? /fewer than 16/ : /ROLLGATE_ADMIN_TOKEN/);
    assert.doesNotMatch(stderr, /listening/);
  }
});

/** One raw HTTP/1.1 request, for headers `fetch` will not send as given (Host). */
async function rawRequest(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(head));
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0));
  } finally {
    conn.close();
  }
}

Deno.test("a web page of another site cannot reach the gateway; JSON only on /api", async () => {
  const gw = await startGateway(["--access-log"], { ROLLGATE_ADMIN_TOKEN: ADMIN });
  const auth = { authorization: `Bearer ${ADMIN}` };
  try {
    // What a page on another site can send without a preflight: a text/plain POST, with its Origin.
    const attack = await fetch(`${gw.url}/api/rollouts`, {
      method: "POST",
      headers: { ...auth, origin: "https://evil.example", "content-type": "text/plain" },
      body: JSON.stringify({ id: "planted" }),
    });
    assert.equal(attack.status, 403);
    assert.match((await attack.json()).error.message, /cross-origin/);
    const paused = await fetch(`${gw.url}/api/pause`, {
      method: "POST",
      headers: { origin: "null", "sec-fetch-site": "cross-site" },
    });
    assert.equal(paused.status, 403);
    await paused.body?.cancel();
    const agent = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { origin: "https://evil.example", "content-type": "text/plain" },
      body: "{}",
    });
    assert.equal(agent.status, 403, "agent endpoints too");
    await agent.body?.cancel();

    // Without an Origin (a script), a body must still be declared JSON.
    const plain = await fetch(`${gw.url}/api/rollouts`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ id: "plain" }),
    });
    assert.equal(plain.status, 415);
    assert.match((await plain.json()).error.message, /application\/json/);

    // A DNS-rebound name: the page and its requests share one origin, but Host is not loopback.
    const rebound = await rawRequest(
      gw.port,
      `GET /api/rollouts HTTP/1.1\r\nHost: attacker.example:${gw.port}\r\n` +
        `Origin: http://attacker.example:${gw.port}\r\nAuthorization: Bearer ${ADMIN}\r\n` +
        `Connection: close\r\n\r\n`,
    );
    assert.match(rebound, /^HTTP\/1\.1 403/);

    const created = await fetch(`${gw.url}/api/rollouts`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", origin: gw.url },
      body: JSON.stringify({ id: "fine" }),
    });
    assert.equal(created.status, 201, "same origin, JSON: accepted");
    await created.body?.cancel();
    const list = await (await fetch(`${gw.url}/api/rollouts`, { headers: auth })).json();
    assert.deepEqual(list.rollouts.map((r: { id: string }) => r.id), ["fine"]);

    const log = gw.output().split("\n").filter((l) => / (GET|POST) \//.test(l));
    assert.ok(
      log.some((l) => / 127\.0\.0\.1 POST \/api\/rollouts 403 [\d.]+ms$/.test(l)),
      log.join("\n"),
    );
    assert.ok(log.some((l) => / POST \/api\/rollouts 415 /.test(l)));
    assert.ok(log.some((l) => / POST \/api\/rollouts 201 /.test(l)));
    assert.ok(!gw.output().includes(ADMIN), "no token in the logs");
    assert.ok(!gw.output().includes("planted"), "no body in the logs");
  } finally {
    await gw.stop();
  }
});

Deno.test("without --access-log nothing is logged per request", async () => {
  const gw = await startGateway([], { ROLLGATE_ACCESS_LOG: "0" });
  try {
    await (await fetch(`${gw.url}/api/rollouts`)).body?.cancel();
    assert.doesNotMatch(gw.output(), / GET \/api\/rollouts /);
  } finally {
    await gw.stop();
  }
});
