import assert from "node:assert/strict";
import { Hono } from "hono";
import {
  browserGuard,
  isLoopbackHost,
  jsonBodyRefusal,
  requireTokenForPublicBind,
  sameToken,
} from "./mod.ts";
import { browserRefusal } from "./browser_guard.ts";
import { UnsafeBindError } from "./bind_address.ts";

const SECRET = "4f9c2a7d1e6b8c3a5f0e9d2b7c4a1f6e";

Deno.test("sameToken: equal only when every byte and the length agree", () => {
  assert.equal(sameToken(SECRET, SECRET), true);
  assert.equal(sameToken(SECRET.slice(0, -1) + "0", SECRET), false, "last character differs");
  assert.equal(sameToken(SECRET.slice(0, -1), SECRET), false, "a prefix");
  assert.equal(sameToken(SECRET + "0", SECRET), false, "an extension");
  assert.equal(sameToken("", SECRET), false);
  assert.equal(sameToken(null, SECRET), false);
  assert.equal(sameToken(undefined, SECRET), false);
  assert.equal(sameToken("clé-ü", "clé-ü"), true, "compared as UTF-8");
  assert.equal(sameToken("clé-ü", "cle-u"), false);
});

Deno.test("admin tokens are compared only through sameToken (hashed, timingSafeEqual)", async () => {
  // Timing is measured by bench/token_compare_bench.ts, never asserted in a test; what a test can
  // pin is that the comparison is the constant-time one and that no gateway file compares a
  // token with === or !== (which stops at the first differing character).
  const src = await Deno.readTextFile(new URL("./token_compare.ts", import.meta.url));
  assert.match(src, /timingSafeEqual\(digest\(presented \?\? ""\), digest\(secret\)\)/);
  const gateway = new URL("../", import.meta.url).pathname;
  const offenders: string[] = [];
  for await (const file of walkTs(gateway)) {
    const text = await Deno.readTextFile(file);
    if (/[!=]==\s*[\w.]*adminToken\b|\badminToken\s*[!=]==(?!\s*undefined)/.test(text)) {
      offenders.push(file);
    }
  }
  assert.deepEqual(offenders, []);
});

async function* walkTs(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}${e.name}`;
    if (e.isDirectory) yield* walkTs(`${path}/`);
    else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts")) yield path;
  }
}

Deno.test("isLoopbackHost", () => {
  for (
    const h of ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "app.localhost", "::1", "[::1]"]
  ) {
    assert.equal(isLoopbackHost(h), true, h);
  }
  for (
    const h of [
      "0.0.0.0",
      "::",
      "[::]",
      "10.0.0.5",
      "192.168.1.2",
      "example.com",
      "127.0.0.256",
      "127.evil.com",
    ]
  ) {
    assert.equal(isLoopbackHost(h), false, h);
  }
});

Deno.test("public bind: refused without an admin token, or with a short one", () => {
  for (const host of ["0.0.0.0", "::", "10.1.2.3", "my-host"]) {
    assert.throws(
      () => requireTokenForPublicBind(host, undefined),
      (e: Error) =>
        e instanceof UnsafeBindError && /ROLLGATE_ADMIN_TOKEN/.test(e.message) &&
        e.message.includes(host),
    );
    assert.throws(() => requireTokenForPublicBind(host, "short"), /fewer than 16/);
    requireTokenForPublicBind(host, SECRET);
  }
  requireTokenForPublicBind("127.0.0.1", undefined);
  requireTokenForPublicBind("localhost", undefined);
});

const headers = (h: Record<string, string>) => new Headers(h);

Deno.test("browserRefusal: scripts and agents pass, other sites' pages do not", () => {
  const host = "127.0.0.1:7860";
  assert.equal(browserRefusal(headers({ host }), {}), null, "no Origin: not a browser");
  assert.equal(
    browserRefusal(headers({ host, origin: "http://127.0.0.1:7860" }), {}),
    null,
    "same origin",
  );
  assert.equal(browserRefusal(headers({ host, "sec-fetch-site": "same-origin" }), {}), null);
  assert.equal(browserRefusal(headers({ host, "sec-fetch-site": "none" }), {}), null);
  assert.match(browserRefusal(headers({ host, origin: "https://evil.example" }), {})!, /Origin/);
  assert.match(browserRefusal(headers({ host, origin: "http://127.0.0.1:9999" }), {})!, /Origin/);
  assert.match(browserRefusal(headers({ host, origin: "null" }), {})!, /Origin: null/);
  assert.match(
    browserRefusal(headers({ host, "sec-fetch-site": "cross-site" }), {})!,
    /cross-site/,
  );
  assert.match(browserRefusal(headers({ host, "sec-fetch-site": "same-site" }), {})!, /same-site/);
});

Deno.test("browserRefusal: a proxied public URL's origin is the gateway's own", () => {
  const o = { publicUrl: "https://me-rollgate.hf.space" };
  const proxied = { host: "10.0.0.4:7860", origin: "https://me-rollgate.hf.space" };
  assert.equal(browserRefusal(headers(proxied), o), null);
  assert.notEqual(
    browserRefusal(headers({ ...proxied, origin: "https://other.hf.space" }), o),
    null,
  );
});

Deno.test("browserRefusal: a loopback listener refuses DNS-rebound host names", () => {
  const o = { loopbackOnly: true };
  // The attacker's page and its requests share one origin: only Host gives it away.
  const rebound = { host: "attacker.example:7860", origin: "http://attacker.example:7860" };
  assert.match(browserRefusal(headers(rebound), o)!, /loopback only/);
  assert.match(browserRefusal(headers({ host: "attacker.example:7860" }), o)!, /loopback only/);
  for (const host of ["127.0.0.1:7860", "localhost:7860", "[::1]:7860", "127.0.0.1:8787"]) {
    assert.equal(browserRefusal(headers({ host }), o), null, host);
  }
  const behindProxy = { ...o, publicUrl: "https://gw.example.org/" };
  assert.equal(browserRefusal(headers({ host: "gw.example.org" }), behindProxy), null);
  assert.equal(browserRefusal(headers({ host: "attacker.example" }), {}), null, "off by default");
});

Deno.test("browserGuard answers 403 in a shape both agent protocols read", async () => {
  const app = new Hono();
  app.use("*", browserGuard({}));
  app.post("/api/pause", (c) => c.json({ paused: true }));
  const refused = await app.request("http://127.0.0.1:7860/api/pause", {
    method: "POST",
    headers: { origin: "https://evil.example", "content-type": "text/plain" },
    body: "{}",
  });
  assert.equal(refused.status, 403);
  const body = await refused.json();
  assert.equal(body.error.type, "permission_error");
  assert.match(body.error.message, /cross-origin/);
  const ok = await app.request("http://127.0.0.1:7860/api/pause", { method: "POST" });
  assert.equal(ok.status, 200);
});

Deno.test("jsonBodyRefusal: a trainer-API body must be declared JSON", () => {
  const req = (method: string, init: { body?: string; type?: string } = {}) =>
    new Request("http://127.0.0.1/api/rollouts", {
      method,
      body: init.body,
      headers: init.type ? { "content-type": init.type } : {},
    });
  assert.equal(jsonBodyRefusal(req("POST", { body: "{}", type: "application/json" })), null);
  assert.equal(
    jsonBodyRefusal(req("POST", { body: "{}", type: "application/json; charset=utf-8" })),
    null,
  );
  assert.equal(
    jsonBodyRefusal(req("POST", { body: "{}", type: "application/merge-patch+json" })),
    null,
  );
  assert.equal(jsonBodyRefusal(req("POST")), null, "bodiless POST");
  assert.equal(jsonBodyRefusal(req("GET")), null);
  // The three "simple" types a cross-origin page can send without a preflight:
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
    assert.match(jsonBodyRefusal(req("POST", { body: "{}", type }))!, /application\/json/, type);
  }
  // A string body in fetch() gets text/plain;charset=UTF-8 by default.
  const plain = new Request("http://127.0.0.1/api/rollouts", { method: "POST", body: "{}" });
  assert.match(jsonBodyRefusal(plain)!, /text\/plain/);
});
