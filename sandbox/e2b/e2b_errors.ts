/**
 * Turns whatever the E2B SDK throws when its API cannot be used — no key, a rejected key, DNS
 * failure, refused connection (`TypeError: fetch failed` with a `cause`), a hung endpoint (a
 * `DOMException` named `TimeoutError`, not `e2b.TimeoutError`) — into ONE error that names the
 * URL and the fix.
 *
 * @module
 */
import { AuthenticationError } from "e2b";
import { SandboxError } from "../sandbox.ts";

/** What to change, appended to every connection error. */
export const E2B_FIX =
  "set E2B_API_KEY (and E2B_DOMAIN or E2B_API_URL for a self-hosted or compatible E2B), " +
  "or use --sandbox local";

/** The connection settings that decide where the SDK goes. */
export interface E2BConnection {
  apiKey?: string;
  domain?: string;
  apiUrl?: string;
  sandboxUrl?: string;
}

/** The control-plane URL the SDK will use, resolved like the SDK does. */
export function e2bApiUrl(c: E2BConnection): string {
  const domain = c.domain || Deno.env.get("E2B_DOMAIN") || "e2b.app";
  return c.apiUrl || Deno.env.get("E2B_API_URL") || `https://api.${domain}`;
}

/** The API key the SDK will use, if any. */
export function e2bApiKey(c: E2BConnection): string | undefined {
  return c.apiKey || Deno.env.get("E2B_API_KEY") || undefined;
}

function causeText(err: unknown): string {
  const parts: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg && !parts.includes(msg)) parts.push(msg);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(": ");
}

function isTimeout(err: unknown): boolean {
  return err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
}

/** One clear {@link SandboxError} for a failed E2B API call to `url`. */
export function describeE2BError(err: unknown, url: string, timeoutMs?: number): SandboxError {
  let what: string;
  if (err instanceof AuthenticationError) {
    what = `E2B rejected the credentials at ${url}: ${err.message}`;
  } else if (isTimeout(err)) {
    const limit = timeoutMs ? ` within ${timeoutMs / 1000} s` : "";
    what = `E2B API at ${url} did not answer${limit} (timeout; the host accepts connections ` +
      "but never responds, or a proxy/firewall swallows them)";
  } else if (err instanceof TypeError) {
    what = `E2B API unreachable at ${url}: ${causeText(err)}`;
  } else {
    what = `E2B API error at ${url}: ${causeText(err)}`;
  }
  return new SandboxError(`${what}; ${E2B_FIX}`, { cause: err });
}
