/**
 * The hostile-client campaign of issue 21 as regression tests, against a real `main.ts serve`
 * process over real sockets: a chunked body past the cap on every route that reads a body leaves
 * the process alive; answers given before the body is read (401/403/404/413) let a keep-alive
 * client with a 5 MB body finish; 200 connections trickling a body are all closed by the body
 * deadline; past the connection cap a new connection gets a JSON 503; an oversized head gets a
 * JSON 431.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { within } from "../support/within.ts";

const ADMIN = "hostile-test-admin-token-0123456789";
const CAP = 64 * 1024;
const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };

async function withServe(
  extra: string[],
  run: (gw: GatewayProcess) => Promise<void>,
): Promise<void> {
  const gw = await startGateway([
    "--max-body-bytes",
    String(CAP),
    "--max-trainer-body-bytes",
    String(CAP),
    "--max-tool-body-bytes",
    String(CAP),
    ...extra,
  ], { ROLLGATE_ADMIN_TOKEN: ADMIN });
  try {
    await run(gw);
  } finally {
    await gw.stop();
  }
}

async function createRollout(gw: GatewayProcess, id: string): Promise<string> {
  const r = await fetch(`${gw.url}/api/rollouts`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ id }),
  });
  assert.equal(r.status, 201);
  return (await r.json()).token;
}

/** Reads from `conn` until it closes or `ms` pass; everything read, and whether it closed. */
async function readAll(conn: Deno.Conn, ms: number): Promise<{ text: string; closed: boolean }> {
  const buf = new Uint8Array(64 * 1024);
  let text = "";
  const timer = setTimeout(() => conn.close(), ms);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return { text, closed: true };
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch {
    return { text, closed: false }; // our own timer closed it
  } finally {
    clearTimeout(timer);
  }
}

/**
 * POSTs `total` bytes in 64 KiB chunks (`Transfer-Encoding: chunked`, no `content-length`),
 * going on after the answer until the server stops taking them; returns what it answered.
 */
async function chunkedPost(
  port: number,
  path: string,
  headers: Record<string, string>,
  total: number,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = [
    `POST ${path} HTTP/1.1`,
    "Host: 127.0.0.1",
    "Transfer-Encoding: chunked",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "",
    "",
  ].join("\r\n");
  const reading = readAll(conn, 20_000);
  const piece = new Uint8Array(64 * 1024).fill(0x20); // JSON whitespace
  const frame = new Uint8Array([
    ...new TextEncoder().encode(`${piece.length.toString(16)}\r\n`),
    ...piece,
    ...new TextEncoder().encode("\r\n"),
  ]);
  try {
    await conn.write(new TextEncoder().encode(head + "5\r\n[1,2]\r\n"));
    for (let sent = 0; sent < total; sent += piece.length) await conn.write(frame);
    await conn.write(new TextEncoder().encode("0\r\n\r\n"));
  } catch { /* the server closed the connection: expected once it answered */ }
  return (await reading).text;
}

Deno.test("hostile bodies: a chunked body past the cap on every body-reading route is a 413, and the process lives", async () => {
  await withServe([], async (gw) => {
    const token = await createRollout(gw, "victim");
    const agent = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const routes: [string, Record<string, string>][] = [
      ["/v1/messages", agent],
      ["/rollout/victim/v1/messages", agent],
      ["/rollout/victim/v1/messages/count_tokens", agent],
      ["/rollout/victim/v1/chat/completions", agent],
      ["/rollout/victim/v1/responses", agent],
      ["/rollout/victim/v1/tools/submit", agent],
      ["/rollout/victim/v1/exit", agent],
      ["/api/rollouts", admin],
      ["/api/requests/r1/complete", admin],
      ["/api/requests/r1/append", admin],
    ];
    for (let round = 0; round < 2; round++) {
      for (const [path, headers] of routes) {
        const answer = await chunkedPost(gw.port, path, headers, 8 * 1024 * 1024);
        assert.match(answer, /^HTTP\/1.1 413/, `${path}: ${answer.slice(0, 200)}`);
        assert.match(answer, new RegExp(`limit of ${CAP} bytes`), path);
        const health = await fetch(`${gw.url}/health`);
        assert.equal(health.status, 200, `alive after ${path}:\n${gw.output().slice(-2000)}`);
        await health.body?.cancel();
      }
    }
    assert.doesNotMatch(gw.output(), /Uncaught|cannot close or enqueue/);
  });
});

Deno.test("hostile bodies: answers before the body (401, 403, 404, 413) let a keep-alive client with 5 MB finish", async () => {
  await withServe([], async (gw) => {
    const a = await createRollout(gw, "a");
    await createRollout(gw, "b");
    const big = JSON.stringify({ pad: "x".repeat(5 * 1024 * 1024) });
    const cases: [string, Record<string, string>, number][] = [
      ["/v1/messages", { "content-type": "application/json" }, 401],
      ["/rollout/b/v1/messages", { authorization: `Bearer ${a}` }, 403],
      ["/rollout/nobody/v1/chat/completions", admin, 404],
      ["/rollout/a/v1/messages", { authorization: `Bearer ${a}` }, 413],
      ["/api/rollouts", { "content-type": "application/json" }, 401],
    ];
    // Deno's fetch keeps connections alive between calls; each answer must end its exchange.
    for (let round = 0; round < 3; round++) {
      for (const [path, headers, status] of cases) {
        const res = await within(
          `${path} (${status}) with a 5 MB body`,
          10_000,
          fetch(`${gw.url}${path}`, { method: "POST", headers, body: big }),
        );
        assert.equal(res.status, status, path);
        const json = await within(`${path}'s answer body`, 10_000, res.json());
        assert.ok(json.error?.message, `${path}: a message says why`);
      }
    }
    // Node's fetch (undici, what Claude Code and most agent CLIs use) hung here before.
    const node = new Deno.Command("node", {
      args: ["--input-type=module", "-e", NODE_CLIENT, gw.url, a],
      stdout: "piped",
      stderr: "piped",
    });
    const out = await within("node's fetch", 30_000, node.output());
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, text + new TextDecoder().decode(out.stderr));
    assert.deepEqual(JSON.parse(text), [401, 403, 404, 413, 401, 403, 404, 413]);
  });
});

/** Early-answered 5 MB posts with Node's own fetch; prints the statuses. */
const NODE_CLIENT = `
const [url, token] = process.argv.slice(1);
const body = JSON.stringify({ pad: "x".repeat(5 * 1024 * 1024) });
const out = [];
for (let i = 0; i < 2; i++) {
  for (const [path, headers] of [
    ["/v1/messages", {}],
    ["/rollout/b/v1/messages", { authorization: "Bearer " + token }],
    ["/rollout/nobody/v1/messages", { authorization: "Bearer ${ADMIN}" }],
    ["/rollout/a/v1/messages", { authorization: "Bearer " + token }],
  ]) {
    const res = await fetch(url + path, { method: "POST", headers, body, signal: AbortSignal.timeout(10000) });
    await res.json();
    out.push(res.status);
  }
}
console.log(JSON.stringify(out));
`;

Deno.test("hostile bodies: 200 connections trickling a body are all closed by the body deadline", async () => {
  await withServe(["--body-deadline", "2"], async (gw) => {
    const token = await createRollout(gw, "slow");
    const conns = await Promise.all(
      Array.from({ length: 200 }, () => Deno.connect({ hostname: "127.0.0.1", port: gw.port })),
    );
    const head = `POST /rollout/slow/v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: 60000\r\n\r\n{`;
    await Promise.all(conns.map((c) => c.write(new TextEncoder().encode(head))));
    // A byte every 300 ms: well inside the 30 s gap timeout, so only the deadline can end them.
    const trickle = setInterval(() => {
      for (const c of conns) c.write(new TextEncoder().encode(" ")).catch(() => {});
    }, 300);
    try {
      const ends = await Promise.all(conns.map((c) => readAll(c, 20_000)));
      const open = ends.filter((e) => !e.closed).length;
      assert.equal(open, 0, `${open} of 200 trickling connections were still open after 20 s`);
      const timedOut = ends.filter((e) => /^HTTP\/1.1 408/.test(e.text)).length;
      assert.equal(
        timedOut,
        200,
        `each was told why: 408; one said ${
          JSON.stringify(ends.find((e) => !/^HTTP\/1.1 408/.test(e.text))?.text)
        }`,
      );
      assert.match(ends[0].text, /took longer than 2 s/);
    } finally {
      clearInterval(trickle);
    }
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  });
});

Deno.test("hostile connections: past the per-address cap a new connection gets a JSON 503; an oversized head a JSON 431", async () => {
  await withServe(["--max-connections-per-address", "20"], async (gw) => {
    const held = await Promise.all(
      Array.from({ length: 20 }, () => Deno.connect({ hostname: "127.0.0.1", port: gw.port })),
    );
    try {
      const extra = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
      await extra.write(
        new TextEncoder().encode("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
      );
      const refused = await readAll(extra, 5_000);
      assert.match(refused.text, /^HTTP\/1.1 503/);
      const body = JSON.parse(refused.text.slice(refused.text.indexOf("\r\n\r\n") + 4));
      assert.equal(body.type, "error");
      assert.match(body.error.message, /20 connections from 127\.0\.0\.1/);
      // A health check past the cap is still answered (a balancer must not find it refused).
      const probe = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
      await probe.write(
        new TextEncoder().encode("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
      );
      assert.match((await readAll(probe, 5_000)).text, /^HTTP\/1.1 200/);
    } finally {
      for (const c of held) c.close();
    }
    // Once they are gone, connections are taken again.
    let ok = false;
    for (let i = 0; i < 50 && !ok; i++) {
      const res = await fetch(`${gw.url}/health`).catch(() => null);
      ok = res?.status === 200;
      await res?.body?.cancel();
      if (!ok) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(ok, "served again after the held connections closed");

    const big = await Deno.connect({ hostname: "127.0.0.1", port: gw.port });
    await big.write(
      new TextEncoder().encode(
        `GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(100_000)}\r\n\r\n`,
      ),
    ).catch(() => {});
    const answer = await readAll(big, 5_000);
    assert.match(answer.text, /^HTTP\/1.1 431/);
    const json = JSON.parse(answer.text.slice(answer.text.indexOf("\r\n\r\n") + 4));
    assert.equal(json.error.type, "invalid_request_error");
    assert.match(json.error.message, /request head is larger/);
  });
});

Deno.test("hostile bodies: a deeply nested tool schema is a 400 naming the depth limit, every time, on every route", async () => {
  await withServe(["--max-body-bytes", String(4 * 1024 * 1024)], async (gw) => {
    const token = await createRollout(gw, "deep");
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const schema = (depth: number) => {
      let s: Record<string, unknown> = { type: "string" };
      for (let i = 0; i < depth; i++) s = { type: "object", properties: { x: s } };
      return s;
    };
    const anthropic = (depth: number) => ({
      model: "m",
      max_tokens: 16,
      messages: [{ role: "user", content: "hi" }],
      tools: [{ name: "deep", description: "d", input_schema: schema(depth) }],
    });
    const chat = {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "deep", parameters: schema(20_000) } }],
    };
    const post = async (path: string, body: unknown) => {
      const res = await fetch(`${gw.url}/rollout/deep/v1/${path}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      return { status: res.status, json: await res.json() };
    };
    for (let i = 0; i < 3; i++) {
      for (
        const [path, body] of [
          ["messages", anthropic(20_000)],
          ["messages/count_tokens", anthropic(20_000)],
          ["chat/completions", chat],
        ] as const
      ) {
        const r = await post(path, body);
        assert.equal(r.status, 400, `${path} #${i}: ${JSON.stringify(r.json).slice(0, 300)}`);
        assert.match(r.json.error.message, /nests deeper than 128 levels/, path);
      }
    }
    // Under the limit, an identical retry gets the same answer as the first request.
    const first = await post("messages/count_tokens", anthropic(60));
    const again = await post("messages/count_tokens", anthropic(60));
    assert.equal(first.status, 200, JSON.stringify(first.json).slice(0, 300));
    assert.deepEqual(again, first);
  });
});
