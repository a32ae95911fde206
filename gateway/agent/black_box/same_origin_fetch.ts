/**
 * The `fetch` the black-box upstream clients use: it follows a redirect only to the upstream's
 * own origin. A redirect elsewhere is refused, not followed: the request carries the API key
 * and the agent's whole conversation, and an upstream (or whoever answers in its name) must not
 * be able to send them to another host.
 *
 * @module
 */

/** How many same-origin redirects one request may take. */
const MAX_REDIRECTS = 5;

/** The upstream redirected to another origin. */
export class ForeignRedirectError extends Error {
  override name = "ForeignRedirectError";
}

/** `fetch` that follows redirects within the origin of each request only. */
export async function sameOriginFetch(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  let url = new URL(input instanceof Request ? input.url : input);
  const origin = url.origin;
  let request: RequestInit = { ...init, redirect: "manual" };
  for (let hops = 0;; hops++) {
    const res = await fetch(input instanceof Request && hops === 0 ? input : url, request);
    const location = res.headers.get("location");
    if (res.status < 300 || res.status > 399 || location === null) return res;
    await res.body?.cancel();
    const next = new URL(location, url);
    if (next.origin !== origin) {
      throw new ForeignRedirectError(
        `the upstream at ${origin} redirected to ${next.origin}; rollgate follows redirects only within the upstream's own origin`,
      );
    }
    if (hops >= MAX_REDIRECTS) {
      throw new ForeignRedirectError(
        `the upstream at ${origin} redirected more than ${MAX_REDIRECTS} times`,
      );
    }
    // 303 (and 301/302 after a POST, as browsers do) turn into a GET without a body.
    if (
      res.status === 303 ||
      ((res.status === 301 || res.status === 302) && request.method === "POST")
    ) {
      request = { ...request, method: "GET", body: undefined };
    }
    url = next;
  }
}
