/**
 * The fetch `Request` the gateway's server hands a handler: its body's web stream and its abort
 * signal are made only when a handler asks for them. (Most requests need neither: the JSON
 * readers take the body whole through {@link directBody}, and only the agent and trainer routes
 * that wait read the signal; a stream and a followed signal per request were ~6 µs and their
 * garbage.) The body methods (`text`, `json`, `bytes`, ...) and `clone` go through an ordinary
 * `Request` made on demand over the same stream, so nothing reads differently.
 *
 * @module
 */
import type { RequestBody } from "./body_stream.ts";

export class ServedRequest extends Request {
  readonly #body: RequestBody | null;
  #gone?: AbortController;
  #left = false;
  #fetchForm?: Request;

  constructor(url: string, method: string, headers: [string, string][], body: RequestBody | null) {
    super(url, { method, headers });
    this.#body = body;
  }

  /** The client went away: the signal aborts (now, or when first read). */
  clientLeft(): void {
    this.#left = true;
    this.#gone?.abort();
  }

  /** The body whole in one buffer, without a stream (see {@link directBody}). */
  get direct(): RequestBody["bytes"] | undefined {
    return this.#body?.bytes;
  }

  /** The signal that aborts when the client goes away, made on first use. */
  clientSignal(): AbortSignal {
    if (!this.#gone) {
      this.#gone = new AbortController();
      if (this.#left) this.#gone.abort();
    }
    return this.#gone.signal;
  }

  /** The body's stream, made on first use; null for a request without one (GET, HEAD). */
  bodyStream(): ReadableStream<Uint8Array> | null {
    return this.#body ? this.fetchForm().body : null;
  }

  /** An ordinary `Request` over the same stream, for what reads the body another way. */
  fetchForm(): Request {
    return this.#fetchForm ??= new Request(this.url, {
      method: this.method,
      headers: this.headers,
      body: this.#body?.stream ?? null,
      // @ts-ignore: `duplex` is required for a streamed request body and missing from the types.
      duplex: "half",
    });
  }
}

// Accessors over the `Request` ones (the DOM types declare them as properties, so a class body
// cannot override them).
Object.defineProperties(ServedRequest.prototype, {
  body: {
    get(this: ServedRequest) {
      return this.bodyStream();
    },
  },
  bodyUsed: {
    get(this: ServedRequest) {
      return this.fetchForm().bodyUsed;
    },
  },
  signal: {
    get(this: ServedRequest) {
      return this.clientSignal();
    },
  },
});
for (const name of ["arrayBuffer", "blob", "bytes", "formData", "json", "text", "clone"] as const) {
  Object.defineProperty(ServedRequest.prototype, name, {
    value(this: ServedRequest) {
      const form = this.fetchForm() as unknown as Record<string, () => unknown>;
      return form[name]();
    },
  });
}

/** How to read `request`'s body whole without its stream, when the server made it; else undefined. */
export function directBody(request: Request): RequestBody["bytes"] | undefined {
  return request instanceof ServedRequest ? request.direct : undefined;
}
