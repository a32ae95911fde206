/**
 * HTTP plumbing shared by the inference-engine backends (vLLM, SGLang): one JSON POST per
 * generation with a per-attempt timeout, bounded retries with exponential backoff for failures
 * that happened before any byte of a response arrived (connection refused, timeout before the
 * response, 5xx status), never after a response started (the engine may have generated already),
 * and cancellation when the agent is gone. Every failure becomes a `GenerationError` that names
 * the engine and its URL.
 *
 * @module
 */
import { jsonWithIds } from "./ids_json.ts";
import {
  abortError,
  type FinishReason,
  GenerationError,
  type GenerationRequest,
} from "./backend.ts";

export interface EngineHttpOptions {
  /** Base URL of the engine (or of its router), e.g. `http://127.0.0.1:8000`. */
  url: string;
  /** Per-attempt deadline, from sending the request to the end of the response body. */
  timeoutMs?: number;
  /** Extra attempts after a failure before any response byte (default 2, so 3 attempts). */
  retries?: number;
  /** First backoff delay; doubles per retry, with jitter, capped at 5 s (default 250 ms). */
  backoffMs?: number;
  /** Headers sent on every request (e.g. `authorization` for an engine started with an API key). */
  headers?: Record<string, string>;
}

export const DEFAULT_ENGINE_TIMEOUT_MS = 600_000;
export const DEFAULT_ENGINE_RETRIES = 2;
const MAX_BACKOFF_MS = 5_000;

/** One attempt, as the caller's hooks see it. */
export interface Attempt {
  /** 0 for the first try. */
  index: number;
}

export interface PostOptions {
  /** Aborted when the agent is gone: the attempt is cancelled and never retried. */
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** The body of each attempt (may differ per attempt, e.g. a fresh request id). */
  body: (attempt: Attempt) => unknown;
  /**
   * Called when an attempt that may have reached the engine is given up (timeout, client gone,
   * broken response), so the engine can be told to stop (SGLang `/abort_request`).
   */
  onCancel?: (attempt: Attempt) => void;
  /**
   * Reads a 2xx answer's body into the value returned as `json` (default: parse it as JSON). A
   * streaming reader consumes events as they arrive; once it has started, failures are final.
   */
  read?: (res: Response) => Promise<unknown>;
  /** Statuses under 500 that are an answer (handed to `read`), not a refusal: for probes. */
  answers?: (status: number) => boolean;
}

export interface EngineResponse {
  json: unknown;
  headers: Headers;
  status: number;
  attempts: number;
}

/** A failure before any response byte: worth another attempt. */
class Retryable extends Error {
  constructor(message: string, readonly timedOut = false) {
    super(message);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", stop);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", stop, { once: true });
  });
}

/** The default body reader: the whole body, parsed as JSON. */
async function readJson(res: Response, where: string): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new GenerationError(
      "engine_failed",
      `${where} sent an answer that is not JSON: ${text.slice(0, 200)}`,
    );
  }
}

/** A JSON-over-HTTP client for one engine. */
export class EngineHttp {
  readonly url: string;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;

  constructor(readonly engine: string, readonly options: EngineHttpOptions) {
    this.url = options.url.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? DEFAULT_ENGINE_TIMEOUT_MS;
    this.retries = Math.max(0, options.retries ?? DEFAULT_ENGINE_RETRIES);
    this.backoffMs = options.backoffMs ?? 250;
  }

  /** POSTs JSON to `path` and returns the parsed answer, retrying as described above. */
  async postJson(path: string, o: PostOptions): Promise<EngineResponse> {
    const where = `${this.engine} at ${this.url}${path}`;
    let last: Retryable | undefined;
    for (let index = 0; index <= this.retries; index++) {
      if (index > 0) {
        const delay = Math.min(MAX_BACKOFF_MS, this.backoffMs * 2 ** (index - 1));
        try {
          await sleep(delay * (0.5 + Math.random() / 2), o.signal);
        } catch {
          throw this.#clientGone(o.signal!, where);
        }
      }
      try {
        const { json, headers, status } = await this.#attempt(path, where, { index }, o);
        return { json, headers, status, attempts: index + 1 };
      } catch (e) {
        if (!(e instanceof Retryable)) throw e;
        last = e;
      }
    }
    throw new GenerationError(
      last!.timedOut ? "engine_timeout" : "engine_failed",
      `${last!.message} (gave up after ${this.retries + 1} attempts)`,
    );
  }

  async #attempt(
    path: string,
    where: string,
    attempt: Attempt,
    o: PostOptions,
  ): Promise<{ json: unknown; headers: Headers; status: number }> {
    if (o.signal?.aborted) throw this.#clientGone(o.signal, where);
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new DOMException("engine timeout", "TimeoutError"));
    }, this.timeoutMs);
    const onClientAbort = () => controller.abort(o.signal!.reason);
    o.signal?.addEventListener("abort", onClientAbort, { once: true });
    /** Whether the request may have reached the engine (then a give-up tells it to stop). */
    let sent = false;
    const giveUp = () => {
      if (sent) o.onCancel?.(attempt);
    };
    try {
      let res: Response;
      try {
        sent = true;
        res = await fetch(this.url + path, {
          method: "POST",
          headers: { "content-type": "application/json", ...this.options.headers, ...o.headers },
          body: jsonWithIds(o.body(attempt)),
          signal: controller.signal,
        });
      } catch (e) {
        if (o.signal?.aborted) {
          giveUp();
          throw this.#clientGone(o.signal, where);
        }
        if (timedOut) {
          giveUp();
          throw new Retryable(
            `${where} timed out after ${this.timeoutMs} ms without answering`,
            true,
          );
        }
        // Connection refused / reset before any response: nothing was generated.
        throw new Retryable(`${where} is unreachable: ${(e as Error).message}`);
      }
      if (res.status >= 500) {
        const text = await res.text().catch(() => "");
        throw new Retryable(`${where} answered ${res.status}: ${text.slice(0, 500)}`);
      }
      // From here on a response has started: never retried.
      if (!res.ok && !o.answers?.(res.status)) {
        const text = await res.text().catch(() => "");
        throw new GenerationError(
          "engine_failed",
          `${where} refused the request (${res.status}): ${text.slice(0, 500)}`,
        );
      }
      try {
        const json = o.read ? await o.read(res) : await readJson(res, where);
        return { json, headers: res.headers, status: res.status };
      } catch (e) {
        if (e instanceof GenerationError) throw e;
        giveUp();
        if (o.signal?.aborted) throw this.#clientGone(o.signal, where);
        if (timedOut) {
          throw new GenerationError(
            "engine_timeout",
            `${where} timed out after ${this.timeoutMs} ms while sending its answer`,
          );
        }
        throw new GenerationError(
          "engine_failed",
          `${where} broke off its answer: ${(e as Error).message}`,
        );
      }
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener("abort", onClientAbort);
    }
  }

  /** Fire-and-forget POST (SGLang `/abort_request`): failures are logged, never thrown. */
  notify(path: string, body: unknown): Promise<void> {
    return fetch(this.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...this.options.headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(Math.min(this.timeoutMs, 10_000)),
    }).then((r) => r.body?.cancel()).catch((e) => {
      console.error(
        `rollgate: ${this.engine} at ${this.url}${path} failed: ${(e as Error).message}`,
      );
    });
  }

  #clientGone(signal: AbortSignal, where: string): GenerationError {
    return abortError(signal, `the client disconnected; the request to ${where} was cancelled`);
  }
}

/**
 * The sticky-routing header for an engine request: the rollout id under `header` (default
 * `X-Session-ID`; `""` sends none), so a session-aware router keeps a rollout on one replica.
 */
export function routingHeaders(
  header: string | undefined,
  routingKey: string | undefined,
): Record<string, string> {
  const name = header ?? "X-Session-ID";
  return name && routingKey ? { [name]: routingKey } : {};
}

/**
 * Whether the engine serves `path` (POST): an empty JSON body is answered 404 where no route is
 * (FastAPI's `{"detail": "Not Found"}`), 403 where it is there but switched off (vLLM 0.32
 * without `--enable-scale-out`: "Scale-out endpoints are disabled"), and refused as invalid
 * (400/422) where one is served. Failures before an answer are retried as a generation's are;
 * nothing is generated.
 */
export async function offersRoute(http: EngineHttp, path: string, signal?: AbortSignal) {
  const res = await http.postJson(path, {
    signal,
    body: () => ({}),
    answers: () => true,
    read: (r) => r.body?.cancel() ?? Promise.resolve(),
  });
  return res.status !== 404 && res.status !== 403;
}

/** Reads a weight version from a header value or a JSON value, when one is there. */
export function weightVersionOf(value: unknown): string | number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value !== "") return value;
  return undefined;
}

/**
 * `stop`/`length` as is; `abort`/`error` (vLLM aborted or failed the request) are errors; anything
 * else (null, unknown) is `stop` when the output ends in a stop id and `length` otherwise.
 */
export function finishReason(
  raw: unknown,
  ids: readonly number[],
  req: GenerationRequest,
  where: string,
): FinishReason {
  if (raw === "stop" || raw === "length") return raw;
  if (raw === "abort" || raw === "error") {
    throw new GenerationError(
      "engine_failed",
      `${where} ended the generation with finish_reason "${raw}"`,
    );
  }
  const last = ids.at(-1);
  return last !== undefined && req.sampling.stop_token_ids.includes(last) ? "stop" : "length";
}
