/**
 * The admin token in front of the viewer (`/ui`), for a browser that cannot send a header: open
 * any viewer URL once with `?token=<admin token>` and a cookie (holding a digest of the token,
 * never the token) keeps the session; `Authorization: Bearer` works as on `/api`. Without an
 * admin token configured the viewer is open, like `/api`.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { presentedToken } from "./auth.ts";
import { sameToken } from "./security/mod.ts";

const COOKIE = "rollgate_ui";

async function digest(token: string): Promise<string> {
  const bytes = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token));
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function loginPage(c: Context, message: string): Response {
  return c.html(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>rollgate · sign in</title>` +
      `</head><body style="font:15px system-ui;margin:40px"><h1>rollgate viewer</h1>` +
      `<p>${message}</p><form method="get"><input type="password" name="token" ` +
      `placeholder="ROLLGATE_ADMIN_TOKEN" autofocus> <button>open</button></form></body></html>`,
    401,
  );
}

export function uiAuth(adminToken: string | undefined, path: string): MiddlewareHandler {
  if (!adminToken) return async (_c, next) => await next();
  const secret = adminToken;
  const expected = digest(secret);
  return async (c, next) => {
    const url = new URL(c.req.url);
    const offered = url.searchParams.get("token");
    if (offered !== null) {
      if (!sameToken(offered, secret)) return loginPage(c, "That is not the admin token.");
      setCookie(c, COOKIE, await expected, { httpOnly: true, sameSite: "Strict", path });
      url.searchParams.delete("token");
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    if (
      sameToken(presentedToken(c.req.raw.headers), secret) ||
      sameToken(getCookie(c, COOKIE), await expected)
    ) {
      return await next();
    }
    return loginPage(c, "The viewer needs the admin token (ROLLGATE_ADMIN_TOKEN).");
  };
}
