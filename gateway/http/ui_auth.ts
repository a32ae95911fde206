/**
 * The admin token in front of the viewer (`/ui`), for a browser that cannot send a header: open
 * any viewer URL once with `?token=<admin token>` and a cookie keeps the session for
 * {@link SESSION_S}: a random salt, the expiry and an HMAC-SHA256 of both keyed by the token, so
 * it never holds the token nor a digest of it alone, differs at every sign-in, and stops opening
 * the viewer when it expires (or the token changes). `Authorization: Bearer` works as on `/api`.
 * Without an admin token configured the viewer is open, like `/api`.
 *
 * @module
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { presentedToken } from "./auth.ts";
import { sameToken } from "../security/mod.ts";

const COOKIE = "rollgate_ui";

/** How long a viewer sign-in lasts. */
export const SESSION_S = 12 * 3600;

function mac(token: string, salt: string, expires: number): string {
  return createHmac("sha256", token).update(`${salt}.${expires}`).digest("hex");
}

/** A new session cookie's value: `salt.expires.mac`. */
function issue(token: string, now: number): string {
  const salt = randomBytes(16).toString("hex");
  const expires = Math.floor(now / 1000) + SESSION_S;
  return `${salt}.${expires}.${mac(token, salt, expires)}`;
}

/** Whether a cookie value was issued with this token and has not expired. */
function valid(token: string, value: string | undefined, now: number): boolean {
  const [salt, expiresText, given, extra] = (value ?? "").split(".");
  const expires = Number(expiresText);
  if (extra !== undefined || !salt || !given || !Number.isInteger(expires)) return false;
  if (expires * 1000 <= now) return false;
  return sameToken(given, mac(token, salt, expires));
}

/** Viewer pages load nothing from elsewhere; the sign-in page has no script at all. */
const LOGIN_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function loginPage(c: Context, message: string): Response {
  return c.html(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>rollgate · sign in</title>` +
      `</head><body style="font:15px system-ui;margin:40px"><h1>rollgate viewer</h1>` +
      `<p>${message}</p><form method="get"><input type="password" name="token" ` +
      `placeholder="ROLLGATE_ADMIN_TOKEN" autofocus> <button>open</button></form></body></html>`,
    401,
    { "content-security-policy": LOGIN_CSP },
  );
}

export function uiAuth(
  adminToken: string | undefined,
  path: string,
  now: () => number = Date.now,
): MiddlewareHandler {
  if (!adminToken) return async (_c, next) => await next();
  const secret = adminToken;
  return async (c, next) => {
    const url = new URL(c.req.url);
    const offered = url.searchParams.get("token");
    if (offered !== null) {
      if (!sameToken(offered, secret)) return loginPage(c, "That is not the admin token.");
      setCookie(c, COOKIE, issue(secret, now()), {
        httpOnly: true,
        sameSite: "Strict",
        path,
        maxAge: SESSION_S,
      });
      url.searchParams.delete("token");
      return c.redirect(`${url.pathname}${url.search}`, 303);
    }
    if (
      sameToken(presentedToken(c.req.raw.headers), secret) ||
      valid(secret, getCookie(c, COOKIE), now())
    ) {
      return await next();
    }
    return loginPage(c, "The viewer needs the admin token (ROLLGATE_ADMIN_TOKEN).");
  };
}
