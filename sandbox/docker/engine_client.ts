/**
 * A minimal Docker Engine API (v1.41) client over a Unix socket, with Deno's own fetch
 * (`Deno.createHttpClient({ proxy: { transport: "unix", path } })`); no npm package. Podman's
 * Docker-compatible service (`podman system service`) speaks the same API.
 *
 * @module
 */
import { SandboxError } from "../sandbox.ts";

/** API version prefix of every request. */
export const DOCKER_API_VERSION = "v1.41";

/** An error answer from the engine. */
export class DockerApiError extends SandboxError {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "DockerApiError";
  }
}

/** Unix socket candidates, in order: `DOCKER_HOST` (unix://), Docker's, Podman's. */
export function dockerSocketCandidates(): string[] {
  const out: string[] = [];
  const host = Deno.env.get("DOCKER_HOST");
  if (host?.startsWith("unix://")) out.push(host.slice("unix://".length));
  out.push("/var/run/docker.sock", "/run/podman/podman.sock");
  const xdg = Deno.env.get("XDG_RUNTIME_DIR");
  if (xdg) out.push(`${xdg}/podman/podman.sock`, `${xdg}/docker.sock`);
  return out;
}

/** The first candidate socket that exists, if any. */
export function findDockerSocket(): string | undefined {
  for (const path of dockerSocketCandidates()) {
    try {
      if (Deno.statSync(path).isSocket) return path;
    } catch { /* not there */ }
  }
  return undefined;
}

export interface RequestOpts {
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  body?: Uint8Array;
  headers?: Record<string, string>;
  /** Default 30 s; `0` disables (streams). */
  timeoutMs?: number;
}

/** One engine, one HTTP client. */
export class DockerEngine {
  readonly socketPath: string;
  #client: Deno.HttpClient;

  constructor(socketPath: string) {
    this.socketPath = socketPath;
    this.#client = Deno.createHttpClient({ proxy: { transport: "unix", path: socketPath } });
  }

  /** Sends a request; non-2xx answers throw {@link DockerApiError} with the engine's message. */
  async request(method: string, path: string, o: RequestOpts = {}): Promise<Response> {
    const url = new URL(`http://docker/${DOCKER_API_VERSION}${path}`);
    for (const [k, v] of Object.entries(o.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers: Record<string, string> = { ...o.headers };
    let body: BodyInit | undefined;
    if (o.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(o.json);
    } else if (o.body) {
      body = o.body as Uint8Array<ArrayBuffer>;
    }
    const timeoutMs = o.timeoutMs ?? 30_000;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers,
        body,
        client: this.#client,
        signal: timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined,
      });
    } catch (err) {
      throw new SandboxError(
        `Docker API at unix://${this.socketPath} failed for ${method} ${path}: ${
          (err as Error).message
        }`,
        { cause: err },
      );
    }
    if (res.ok) return res;
    const text = await res.text();
    let message = text;
    try {
      message = JSON.parse(text).message ?? text;
    } catch { /* not JSON */ }
    throw new DockerApiError(res.status, `Docker API ${method} ${path}: ${res.status} ${message}`);
  }

  /** A request whose answer is JSON (or empty → undefined). */
  async json<T = Record<string, unknown>>(
    method: string,
    path: string,
    o: RequestOpts = {},
  ): Promise<T> {
    const res = await this.request(method, path, o);
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A request whose answer is ignored (the body is drained). */
  async call(method: string, path: string, o: RequestOpts = {}): Promise<void> {
    const res = await this.request(method, path, o);
    await res.body?.cancel();
  }

  close(): void {
    this.#client.close();
  }
}
