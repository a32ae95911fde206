/** The viewer's sign-in cookie: salted, expiring, bound to the admin token; the sign-in page's CSP. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Hono } from "hono";
import { SESSION_S, uiAuth } from "./ui_auth.ts";

function viewer(token: string, clock: { now: number }) {
  const app = new Hono();
  app.use("/ui/*", uiAuth(token, "/ui", () => clock.now));
  app.get("/ui/page", (c) => c.text("the page"));
  return app;
}

async function signIn(app: Hono, token: string): Promise<{ cookie: string; header: string }> {
  const res = await app.request(`/ui/page?token=${token}`);
  assert.equal(res.status, 303);
  const header = res.headers.get("set-cookie")!;
  return { cookie: header.split(";")[0], header };
}

const open = async (app: Hono, cookie: string) =>
  (await app.request("/ui/page", { headers: { cookie } })).status;

Deno.test("viewer cookie: salted, expiring, bound to the admin token", async () => {
  const clock = { now: Date.UTC(2026, 0, 1) };
  const app = viewer("s3cret-admin-token", clock);
  const first = await signIn(app, "s3cret-admin-token");
  const second = await signIn(app, "s3cret-admin-token");
  assert.notEqual(first.cookie, second.cookie, "every sign-in gets its own salt");
  const digest = createHash("sha256").update("s3cret-admin-token").digest("hex");
  assert.ok(!first.cookie.includes(digest), "not the token's plain digest");
  assert.ok(!first.cookie.includes("s3cret"), "not the token");
  assert.match(first.header, new RegExp(`Max-Age=${SESSION_S}`));
  assert.match(first.header, /HttpOnly/);
  assert.equal(await open(app, first.cookie), 200);

  // Tampering with the expiry breaks the MAC.
  const [name, value] = first.cookie.split("=");
  const [salt, expires, mac] = value.split(".");
  assert.equal(await open(app, `${name}=${salt}.${Number(expires) + 3600}.${mac}`), 401);
  assert.equal(await open(app, `${name}=${salt}.${expires}.${mac}.x`), 401);

  // Past its expiry it opens nothing.
  clock.now += (SESSION_S - 60) * 1000;
  assert.equal(await open(app, first.cookie), 200);
  clock.now += 120 * 1000;
  const expired = await app.request("/ui/page", { headers: { cookie: first.cookie } });
  assert.equal(expired.status, 401);
  assert.match(expired.headers.get("content-security-policy") ?? "", /default-src 'none'/);

  // Another admin token (a rotated one) does not accept the old cookie.
  assert.equal(await open(viewer("another-admin-token", clock), second.cookie), 401);
});
