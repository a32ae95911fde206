/** The HTTP server's timeouts and streaming, over real sockets with hand-written HTTP. */
import assert from "node:assert/strict";
import { serveHttp } from "./http_server.ts";
import { GatewayError } from "../gateway_error.ts";
import { readBodyBytes } from "./read_body.ts";

const TIMEOUTS = { headerMs: 300, bodyIdleMs: 300, idleMs: 500 };

/** Sends `raw`, then reads until the server closes the connection (or `waitMs` passes). */
async function exchange(
  port: number,
  raw: string,
  waitMs = 5_000,
): Promise<{ text: string; closedAfterMs: number | null }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const started = Date.now();
  if (raw) await conn.write(new TextEncoder().encode(raw));
  const chunks: string[] = [];
  const buf = new Uint8Array(4096);
  const timer = setTimeout(() => conn.close(), waitMs);
  let closedAfterMs: number | null = null;
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) {
        closedAfterMs = Date.now() - started;
        break;
      }
      chunks.push(new TextDecoder().decode(buf.subarray(0, n)));
    }
  } catch { /* closed by our own timer */ }
  clearTimeout(timer);
  try {
    conn.close();
  } catch { /* already closed */ }
  return { text: chunks.join(""), closedAfterMs };
}

async function withServer(
  handler: (req: Request) => Response | Promise<Response>,
  run: (port: number) => Promise<void>,
) {
  const server = await serveHttp(handler, { hostname: "127.0.0.1", port: 0, timeouts: TIMEOUTS });
  try {
    await run(server.addr.port);
  } finally {
    await server.shutdown();
  }
}

Deno.test("http server: a connection that never completes its request head is closed", async () => {
  await withServer(() => new Response("ok"), async (port) => {
    const silent = await exchange(port, "");
    assert.ok(silent.closedAfterMs !== null && silent.closedAfterMs < 3_000, "silent: closed");
    const partial = await exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n");
    assert.ok(partial.closedAfterMs !== null && partial.closedAfterMs < 3_000, "partial: closed");
    assert.equal(partial.text, "", "nothing was answered");
  });
});

Deno.test("http server: a stalled body gets a 408 and the connection closes", async () => {
  await withServer(async (req) => {
    try {
      return new Response(`read ${(await req.text()).length}`);
    } catch (e) {
      assert.ok(e instanceof GatewayError);
      return new Response(e.message, { status: e.status });
    }
  }, async (port) => {
    const r = await exchange(
      port,
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc",
    );
    assert.match(r.text, /^HTTP\/1.1 408/);
    assert.match(r.text, /the request body stalled/);
    assert.ok(r.closedAfterMs !== null, "the connection closed");
  });
});

Deno.test("http server: an idle kept-alive connection closes; one in use does not", async () => {
  await withServer(async (req) => {
    if (new URL(req.url).pathname === "/slow") await new Promise((r) => setTimeout(r, 1_200));
    return new Response("ok");
  }, async (port) => {
    const idle = await exchange(port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.match(idle.text, /^HTTP\/1.1 200/);
    assert.ok(idle.closedAfterMs !== null && idle.closedAfterMs < 3_000, "idle: closed");
    // A response that takes longer than every timeout still arrives: only waiting clients count.
    const slow = await exchange(port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.match(slow.text, /^HTTP\/1.1 200/);
    assert.match(slow.text, /\r\nok\r\n/);
  });
});

Deno.test("http server: streams the body as produced; a client that leaves aborts the request", async () => {
  let aborted!: () => void;
  const abortSeen = new Promise<void>((r) => aborted = r);
  let cancelled!: () => void;
  const cancelSeen = new Promise<void>((r) => cancelled = r);
  await withServer((req) => {
    req.signal.addEventListener("abort", () => aborted());
    let timer: ReturnType<typeof setInterval>;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("first\n"));
        timer = setInterval(() => c.enqueue(new TextEncoder().encode("tick\n")), 50);
      },
      cancel() {
        clearInterval(timer);
        cancelled();
      },
    });
    return new Response(body, { headers: { "content-type": "text/plain" } });
  }, async (port) => {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    assert.match(new TextDecoder().decode(value), /first/);
    await reader.cancel();
    await Promise.all([abortSeen, cancelSeen]);
  });
});

Deno.test("http server: a signal first read after the client left is already aborted", async () => {
  let left!: () => void;
  const leftSeen = new Promise<void>((r) => left = r);
  let signal!: Promise<AbortSignal>;
  await withServer((req) => {
    // The handler looks at its signal only once the client is gone (a turn that waited).
    signal = leftSeen.then(() => new Promise((r) => setTimeout(() => r(req.signal), 50)));
    const first = new TextEncoder().encode("first\n");
    return new Response(new ReadableStream({ start: (c) => c.enqueue(first) }), {
      headers: { "content-type": "text/plain" },
    });
  }, async (port) => {
    const res = await fetch(`http://127.0.0.1:${port}/`);
    await res.body!.cancel();
    left();
    assert.equal((await signal).aborted, true);
  });
});

Deno.test("http server: a body read as a stream, as text, as JSON or through a clone reads the same", async () => {
  await withServer(async (req) => {
    const how = new URL(req.url).pathname;
    assert.equal(req.bodyUsed, false);
    const text = how === "/stream"
      ? await new Response(req.body).text()
      : how === "/json"
      ? JSON.stringify(await req.json())
      : how === "/clone"
      ? await req.clone().text()
      : await req.text();
    return Response.json({ text, used: req.bodyUsed });
  }, async (port) => {
    const body = JSON.stringify({ a: "x".repeat(200_000) });
    for (const how of ["/stream", "/text", "/json", "/clone"]) {
      const res = await fetch(`http://127.0.0.1:${port}${how}`, { method: "POST", body });
      const got = await res.json();
      assert.equal(got.text, body, how);
      assert.equal(got.used, how !== "/clone", how);
    }
    const get = await fetch(`http://127.0.0.1:${port}/text`);
    assert.deepEqual(await get.json(), { text: "", used: false });
  });
});

Deno.test("http server: request bodies and headers reach the handler unchanged", async () => {
  await withServer(async (req) => {
    const body = await req.text();
    return Response.json({ body, auth: req.headers.get("authorization"), url: req.url });
  }, async (port) => {
    const big = "x".repeat(3 * 1024 * 1024);
    const res = await fetch(`http://127.0.0.1:${port}/a/b?c=1`, {
      method: "POST",
      headers: { authorization: "Bearer t" },
      body: big,
    });
    const json = await res.json();
    assert.equal(json.body.length, big.length);
    assert.equal(json.auth, "Bearer t");
    assert.equal(new URL(json.url).pathname + new URL(json.url).search, "/a/b?c=1");
  });
});

Deno.test("http server: a body the handler never read does not cut the kept-alive connection later", async () => {
  const server = await serveHttp(() => new Response("ok"), {
    hostname: "127.0.0.1",
    port: 0,
    timeouts: { headerMs: 2_000, bodyIdleMs: 200, bodyMs: 300, idleMs: 2_000 },
  });
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
    const buf = new Uint8Array(4096);
    const ask = async (raw: string) => {
      await conn.write(new TextEncoder().encode(raw));
      const n = await conn.read(buf);
      return n === null ? null : new TextDecoder().decode(buf.subarray(0, n));
    };
    assert.match(
      (await ask("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"))!,
      /^HTTP\/1.1 200/,
    );
    await new Promise((r) => setTimeout(r, 600)); // past both body clocks
    assert.match((await ask("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))!, /^HTTP\/1.1 200/);
    conn.close();
  } finally {
    await server.shutdown();
  }
});

Deno.test("http server: a body read whole keeps its cap and its clocks; a JSON answer goes out whole", async () => {
  await withServer(async (req) => {
    try {
      const bytes = await readBodyBytes(req, 10);
      return Response.json({ read: new TextDecoder().decode(bytes ?? undefined) });
    } catch (e) {
      assert.ok(e instanceof GatewayError);
      return new Response(e.message, { status: e.status });
    }
  }, async (port) => {
    // Chunked: no declared length, so only the cap stops it.
    const chunked = (body: string) =>
      `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
    const ok = await exchange(port, chunked("3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n"), 1_000);
    assert.match(ok.text, /^HTTP\/1.1 200/);
    // Written whole: a declared length, no chunk framing.
    assert.match(ok.text, /\r\ncontent-length: 18\r\n/i);
    assert.match(ok.text, /\r\n\r\n\{"read":"abcdefg"\}$/);
    const big = await exchange(port, chunked("8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n"));
    assert.match(big.text, /^HTTP\/1.1 413/);
    assert.ok(big.closedAfterMs !== null, "the connection closed");
    const stalled = await exchange(port, chunked("3\r\nabc\r\n"));
    assert.match(stalled.text, /^HTTP\/1.1 408/);
    assert.match(stalled.text, /the request body stalled/);
    assert.ok(stalled.closedAfterMs !== null, "the connection closed");
  });
});

Deno.test("http server: the pieces of a body read whole are freed once copied, and what followed them reads intact", async () => {
  // Each piece is detached once copied into the body's buffer: this holds only while node hands
  // out pieces that nothing else views. Pipelined requests put a body's tail and the next head in
  // one socket read; a detached read buffer would lose the second request or corrupt a body.
  const seen: string[] = [];
  await withServer(async (req) => {
    const bytes = await readBodyBytes(req, 1 << 24);
    const text = new TextDecoder().decode(bytes ?? undefined);
    seen.push(text);
    return Response.json({ length: text.length });
  }, async (port) => {
    const bodies = [0, 1, 2].map((k) =>
      Array.from({ length: 300_000 + k * 7 }, (_, i) => String.fromCharCode(97 + (i * 7 + k) % 26))
        .join("")
    );
    const raw = bodies.map((b, k) =>
      `POST /${k} HTTP/1.1\r\nHost: x\r\nContent-Length: ${b.length}\r\n` +
      (k === bodies.length - 1 ? "Connection: close\r\n" : "") + `\r\n${b}`
    ).join("");
    const { text } = await exchange(port, raw);
    assert.equal(text.match(/HTTP\/1.1 200/g)?.length, 3, text.slice(0, 300));
    assert.deepEqual(seen, bodies);
  });
});

Deno.test("http server: a body that keeps coming within the idle timeout is read to its end, however long", async () => {
  // The idle clock restarts with each piece (one timer per body, moved by each piece): pieces
  // 250 ms apart under a 1 s idle timeout, 1.25 s in all, are one body; a stop after them is a
  // stall counted from the last piece. (Margins of 4× for a loaded machine's late timers.)
  const server = await serveHttp(async (req) => {
    try {
      return new Response(`read ${(await readBodyBytes(req, 1_000))?.byteLength}`);
    } catch (e) {
      assert.ok(e instanceof GatewayError);
      return new Response(e.message, { status: e.status });
    }
  }, { hostname: "127.0.0.1", port: 0, timeouts: { ...TIMEOUTS, bodyIdleMs: 1_000 } });
  const port = server.addr.port;
  try {
    const send = async (pieces: number, declared: number) => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      const encoder = new TextEncoder();
      await conn.write(
        encoder.encode(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`),
      );
      for (let k = 0; k < pieces; k++) {
        await new Promise((r) => setTimeout(r, 250));
        await conn.write(encoder.encode("abcde"));
      }
      const sent = Date.now();
      const chunks: string[] = [];
      const buf = new Uint8Array(4096);
      const timer = setTimeout(() => conn.close(), 10_000);
      try {
        for (let n; (n = await conn.read(buf)) !== null;) {
          chunks.push(new TextDecoder().decode(buf.subarray(0, n)));
          if (/\r\n\r\n.+/s.test(chunks.join(""))) break;
        }
      } catch { /* closed by the timer */ }
      clearTimeout(timer);
      try {
        conn.close();
      } catch { /* closed */ }
      return { text: chunks.join(""), afterLastMs: Date.now() - sent };
    };
    const whole = await send(5, 25);
    assert.match(whole.text, /^HTTP\/1.1 200/);
    assert.match(whole.text, /\r\nread 25\r\n/);
    const stalled = await send(3, 25);
    assert.match(stalled.text, /^HTTP\/1.1 408/);
    assert.match(stalled.text, /the request body stalled/);
    assert.ok(
      stalled.afterLastMs >= 900,
      `the stall counts from the last piece: ${stalled.afterLastMs} ms`,
    );
  } finally {
    await server.shutdown();
  }
});
