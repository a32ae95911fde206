/**
 * TEST DOUBLES at the inference-engine boundary: a fake vLLM OpenAI-compatible server and a fake
 * SGLang server, real HTTP (`Deno.serve` on 127.0.0.1, port 0). They follow the engines'
 * documented request and response shapes, validate what they receive (a request the real engine
 * would refuse or misread gets a 400 here), record it, and answer with real Qwen3 token ids: the
 * prompt ids are decoded, a script picks the reply text, and the reply is tokenized with the real
 * tokenizer. Logprobs come from a deterministic formula (`engineLogprob`), distinct from the
 * scripted trainer's, so a test can tell whose logprobs a sample holds.
 *
 * Each incoming generation takes the next queued behaviour (default `ok`):
 * - `ok`: answer at once;
 * - `503`: answer 503 before anything else (a retryable failure);
 * - `partial`: start a 200 answer, send half of the JSON, then break the connection;
 * - `hang`: never answer; wait for the request to be cancelled (vLLM) or aborted through
 *   `/abort_request` (SGLang);
 * - `hold`: answer normally once the test calls `release()`.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { expertRows } from "../support/sample_facts_check.ts";
import { encodeNpy } from "../../generation/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import type { TextScript } from "../support/scripted_policy.ts";

export type Behaviour = "ok" | "503" | "partial" | "hang" | "hold";

export interface Received {
  path: string;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
  /** The ids the double sampled, once it answered. */
  output?: number[];
}

/** The double's deterministic logprob for its i-th sampled token. */
export function engineLogprob(i: number): number {
  return -0.25 - (i % 5) / 10;
}

/** An append-only log whose entries a test can await. */
export class Log<T> {
  readonly items: T[] = [];
  #waiters: { match: (t: T) => boolean; resolve: (t: T) => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.match(item)) return true;
      w.resolve(item);
      return false;
    });
  }

  /** Resolves with the first entry (already logged or future) that matches. */
  when(match: (t: T) => boolean = () => true): Promise<T> {
    const found = this.items.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }
}

abstract class FakeEngine {
  /** Generation requests, in arrival order (whatever their behaviour). */
  readonly generations = new Log<Received>();
  /** Generation requests whose HTTP request the client cancelled (connection closed). */
  readonly cancelled = new Log<Received>();
  /** Queued behaviours; an empty queue means `ok`. */
  readonly behaviours: Behaviour[] = [];
  weightVersion: string | undefined = "w-7";
  #server?: Deno.HttpServer<Deno.NetAddr>;
  #holds: (() => void)[] = [];

  constructor(readonly model: PolicyModel, readonly script: TextScript) {}

  get url(): string {
    return `http://127.0.0.1:${this.#server!.addr.port}`;
  }

  start(): this {
    this.#server = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      (req) => this.#handle(req),
    );
    return this;
  }

  /** Lets every `hold` request answer. */
  release(): void {
    for (const r of this.#holds.splice(0)) r();
  }

  async close(): Promise<void> {
    this.release();
    const server = this.#server;
    this.#closed ??= server?.shutdown();
    await this.#closed;
  }

  #closed?: Promise<void>;

  /** The reply a real model would sample for a prompt: ids, text, logprobs. */
  protected async reply(promptIds: number[]) {
    const text = await this.model.decode(promptIds);
    const turn = this.generations.items.length - 1;
    const replyText = this.script({ text, ids: promptIds, turn });
    const ids = await this.model.tokenizer.encode(replyText);
    return { ids, text: replyText, logprobs: ids.map((_, i) => engineLogprob(i)) };
  }

  /** The paths generations are posted to. */
  protected abstract generationPaths(): string[];
  /** A list of what is wrong with a generation body (empty when the engine would accept it). */
  protected abstract problems(body: Record<string, unknown>, path: string): string[];
  protected abstract answer(received: Received): Promise<unknown>;
  /** Other routes (SGLang's `/abort_request`). */
  protected other(_req: Request, _path: string): Promise<Response | undefined> | undefined {
    return undefined;
  }
  /** Resolves when a `hang` request should end (SGLang: aborted by rid). */
  protected hangEnds(_received: Received): Promise<unknown> {
    return new Promise(() => {});
  }

  async #handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const other = await this.other(req, path);
    if (other) return other;
    if (req.method !== "POST" || !this.generationPaths().includes(path)) {
      return Response.json({ error: `no route ${req.method} ${path}` }, { status: 404 });
    }
    let body: Record<string, unknown>;
    try {
      body = await req.json();
    } catch {
      return Response.json({ error: "body is not JSON" }, { status: 400 });
    }
    const received: Received = { path, headers: req.headers, body };
    let answered = false;
    req.signal.addEventListener("abort", () => answered || this.cancelled.push(received), {
      once: true,
    });
    this.generations.push(received);
    try {
      return await this.#generation(req, received);
    } finally {
      answered = true;
    }
  }

  async #generation(req: Request, received: Received): Promise<Response> {
    const body = received.body;
    const behaviour = this.behaviours.shift() ?? "ok";
    if (behaviour === "503") {
      return Response.json({ error: "engine is warming up" }, { status: 503 });
    }
    const problems = this.problems(body, received.path);
    if (problems.length) return Response.json({ error: problems.join("; ") }, { status: 400 });
    if (behaviour === "hang") {
      const ended = await Promise.race([
        this.hangEnds(received).then(() => "aborted"),
        new Promise((r) => req.signal.addEventListener("abort", () => r("cancelled"))),
      ]);
      if (ended === "aborted") return Response.json(await this.abortedAnswer(received));
      return new Response(null, { status: 499 });
    }
    if (body.stream) {
      // `hold` pauses a stream halfway, so a test can see what arrived before the end.
      const hold = behaviour === "hold" ? new Promise<void>((r) => this.#holds.push(r)) : undefined;
      return await this.streamAnswer(received, hold);
    }
    if (behaviour === "hold") await new Promise<void>((r) => this.#holds.push(r));
    const json = JSON.stringify(await this.answer(received));
    const headers = new Headers({ "content-type": "application/json" });
    if (this.weightVersion && received.path === "/v1/completions") {
      headers.set("x-weight-version", this.weightVersion);
    }
    if (behaviour === "partial") {
      // Announce the whole answer, send half of it, end the connection.
      const bytes = new TextEncoder().encode(json);
      headers.set("content-length", String(bytes.length));
      const half = bytes.slice(0, bytes.length >> 1);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(half);
          controller.close();
        },
      });
      return new Response(stream, { status: 200, headers });
    }
    return new Response(json, { status: 200, headers });
  }

  protected abortedAnswer(_received: Received): Promise<unknown> {
    return Promise.resolve({});
  }

  /** A streamed answer (engines that stream override this). */
  protected streamAnswer(_received: Received, _hold?: Promise<void>): Promise<Response> {
    return Promise.resolve(
      Response.json({ error: "this double does not stream" }, { status: 400 }),
    );
  }
}

const isIds = (v: unknown) =>
  Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0);

/**
 * TEST DOUBLE of vLLM 0.32's two token-in endpoints: the OpenAI-compatible `POST /v1/completions`
 * (`CompletionRequest` / `CompletionResponse` in `vllm/entrypoints/openai/completion/protocol.py`)
 * and, with `scaleOut` (`--enable-scale-out`), the RL API's `POST /inference/v1/generate`
 * (`GenerateRequest` / `GenerateTokensResponse` in
 * `vllm/entrypoints/scale_out/token_in_token_out/protocol.py`), in the shapes a real vLLM sent
 * (`generation/__fixtures__/`). What no CPU engine can produce is simulated in vLLM's exact
 * format: MoE routing as base64 `.npy` (`numpy2base64`, shape `(T, layers, top_k)` from
 * `routed_experts_prompt_start`), kept sets (`--return-sampling-mask`), and a weight update
 * inside a generation (two `weight_versions` spans).
 */
export class FakeVllm extends FakeEngine {
  /**
   * Serves `/inference/v1/generate`; else 404 there (a vLLM without the RL API), or with
   * `"disabled"` vLLM 0.32's own 403 for a server started without `--enable-scale-out`.
   */
  scaleOut: boolean | "disabled" = false;
  /** `--enable-return-routed-experts` on an MoE model of these layers and top-k (uint8 rows). */
  routedExperts?: { layers: number; topK: number };
  /**
   * `--return-sampling-mask`: each output id's kept set (the id and the two after it). A double
   * because the CPU build cannot: vLLM 0.32 computes `sampling_mask` only in Model Runner V2's
   * sampler (`vllm/v1/worker/gpu/sample/sampler.py`, Triton kernels), which the CPU worker does
   * not run; the format is the real one (`sampling_mask` on the RL API's choices).
   */
  samplingMask = false;
  /** A weight update after this many ids of the next generation (then `weightVersion`). */
  versionChange?: { after: number; version: string };
  /** Requests to `/inference/v1/generate` without a generation in them (a client's probe). */
  readonly probes = new Log<Received>();

  protected generationPaths(): string[] {
    return this.scaleOut === true ? ["/v1/completions", GENERATE] : ["/v1/completions"];
  }

  protected override other(req: Request, path: string): Promise<Response | undefined> | undefined {
    if (path !== GENERATE) return undefined;
    if (this.scaleOut === "disabled") {
      this.probes.push({ path, headers: req.headers, body: null });
      // What the real vLLM 0.32 (CPU build) answers when started without --enable-scale-out.
      return Promise.resolve(Response.json({
        error: {
          message:
            "Scale-out endpoints are disabled. Restart vllm serve with --enable-scale-out to enable them.",
          type: "PermissionDeniedError",
          param: null,
          code: 403,
        },
      }, { status: 403 }));
    }
    if (!this.scaleOut) {
      this.probes.push({ path, headers: req.headers, body: null });
      // FastAPI's own 404 for a route the server does not have.
      return Promise.resolve(Response.json({ detail: "Not Found" }, { status: 404 }));
    }
    return (async () => {
      const body = await req.clone().json().catch(() => null);
      if (body && body.token_ids !== undefined) return undefined;
      this.probes.push({ path, headers: req.headers, body });
      const error =
        "2 validation errors: body.token_ids Field required; body.sampling_params Field required";
      return Response.json({
        error: { message: error, type: "Bad Request", param: "body.token_ids", code: 400 },
      }, { status: 400 });
    })();
  }

  protected problems(b: Record<string, unknown>, path: string): string[] {
    const generate = path === GENERATE;
    const s = (generate ? b.sampling_params ?? {} : b) as Record<string, unknown>;
    const prompt = generate ? b.token_ids : b.prompt;
    const p: string[] = [];
    if (!isIds(prompt)) {
      p.push(`${generate ? "token_ids" : "prompt"} must be a non-empty list of token ids`);
    }
    if (generate && b.prompt !== undefined) p.push("prompt is not a GenerateRequest field");
    if (generate && (typeof b.request_id !== "string" || b.request_id === "")) p.push("request_id");
    if (generate && s.detokenize !== false) p.push("sampling_params.detokenize must be false");
    if (!generate && b.return_token_ids !== true) p.push("return_token_ids must be true");
    if (!Number.isInteger(s.max_tokens) || (s.max_tokens as number) < 1) p.push("max_tokens");
    if (s.logprobs !== 0) p.push("logprobs must be 0 (sampled token only)");
    if (s.skip_special_tokens !== false) p.push("skip_special_tokens must be false");
    if (s.include_stop_str_in_output !== true) p.push("include_stop_str_in_output must be true");
    if (!isIds(s.stop_token_ids)) p.push("stop_token_ids");
    const start = s.routed_experts_prompt_start;
    if (
      start !== undefined &&
      !(Number.isInteger(start) && (start as number) >= 0 &&
        (start as number) <= (prompt as number[]).length)
    ) {
      // vLLM's input processor: "routed_experts_prompt_start must be between 0 and prompt_len".
      p.push("routed_experts_prompt_start must be between 0 and the prompt length");
    }
    return p;
  }

  /** What one generation sends besides ids and logprobs, in vLLM's wire form. */
  #extras(r: Received, ids: number[]) {
    const generate = r.path === GENERATE;
    const sampling = generate ? r.body.sampling_params : r.body;
    const prompt: number[] = generate ? r.body.token_ids : r.body.prompt;
    const start = sampling.routed_experts_prompt_start ?? 0;
    const rows = this.routedExperts ? expertRows(this.routedExperts, prompt, ids, start) : null;
    const routed = rows
      ? Buffer.from(encodeNpy("uint8", rows.shape, rows.bytes)).toString("base64")
      : null;
    const version = this.weightVersion ?? "default";
    let spans = [{ version, start: 0, end: ids.length }];
    const change = this.versionChange;
    if (generate && change && change.after < ids.length) {
      spans = [
        { version, start: 0, end: change.after },
        { version: change.version, start: change.after, end: ids.length },
      ];
      this.weightVersion = change.version;
      this.versionChange = undefined;
    }
    return {
      stop: (sampling.stop_token_ids as number[]).includes(ids.at(-1)!),
      routed,
      mask: generate && this.samplingMask ? ids.map((id) => [id, id + 1, id + 2]) : null,
      spans,
    };
  }

  protected async answer(r: Received): Promise<unknown> {
    const generate = r.path === GENERATE;
    const prompt: number[] = generate ? r.body.token_ids : r.body.prompt;
    const { ids, text, logprobs } = await this.reply(prompt);
    r.output = ids;
    const x = this.#extras(r, ids);
    const usage = {
      prompt_tokens: prompt.length,
      completion_tokens: ids.length,
      total_tokens: prompt.length + ids.length,
    };
    if (generate) {
      return {
        request_id: `generate-tokens-${r.body.request_id}`,
        model: r.body.model ?? "tiny",
        created: Math.floor(Date.now() / 1000),
        usage,
        prompt_logprobs: null,
        prompt_token_ids: null,
        output_mode: "tokens",
        choices: [{
          index: 0,
          finish_reason: x.stop ? "stop" : "length",
          stop_reason: null,
          token_ids: ids,
          routed_experts: x.routed,
          sampling_mask: x.mask,
          weight_versions: x.spans,
          logprobs: { content: generateLogprobs(ids, logprobs) },
        }],
      };
    }
    return {
      id: `cmpl-${crypto.randomUUID()}`,
      object: "text_completion",
      created: Math.floor(Date.now() / 1000),
      model: r.body.model ?? "Qwen/Qwen3-0.6B",
      choices: [{
        index: 0,
        text,
        logprobs: {
          text_offset: ids.map((_, i) => i),
          token_logprobs: logprobs,
          tokens: ids.map((id) => `token_id:${id}`),
          top_logprobs: ids.map(() => null),
        },
        finish_reason: x.stop ? "stop" : "length",
        stop_reason: null,
        token_ids: ids,
        prompt_token_ids: r.body.prompt,
        routed_experts: x.routed,
      }],
      usage,
    };
  }

  protected override async streamAnswer(r: Received, hold?: Promise<void>): Promise<Response> {
    const generate = r.path === GENERATE;
    const { ids, logprobs } = await this.reply(generate ? r.body.token_ids : r.body.prompt);
    r.output = ids;
    const x = this.#extras(r, ids);
    const chunks: unknown[] = [];
    for (let i = 0; i < ids.length; i += 2) {
      const last = i + 2 >= ids.length;
      const finish = last ? (x.stop ? "stop" : "length") : null;
      const delta = ids.slice(i, i + 2);
      chunks.push(
        generate
          ? {
            request_id: `generate-tokens-${r.body.request_id}`,
            output_mode: "tokens",
            choices: [{
              index: 0,
              finish_reason: finish,
              token_ids: delta,
              // Routing and spans come with the terminal output; kept sets per chunk.
              routed_experts: last ? x.routed : null,
              sampling_mask: x.mask?.slice(i, i + 2) ?? null,
              weight_versions: last ? x.spans : null,
              logprobs: { content: generateLogprobs(delta, logprobs.slice(i, i + 2)) },
            }],
          }
          : {
            id: "cmpl-stream",
            object: "text_completion",
            choices: [{
              index: 0,
              text: "",
              token_ids: delta,
              logprobs: { token_logprobs: logprobs.slice(i, i + 2) },
              finish_reason: finish,
            }],
          },
      );
    }
    const headers = new Headers({ "content-type": "text/event-stream" });
    if (this.weightVersion && !generate) headers.set("x-weight-version", this.weightVersion);
    return eventStream(chunks, headers, hold);
  }
}

const GENERATE = "/inference/v1/generate";

function generateLogprobs(ids: number[], logprobs: number[]) {
  return ids.map((token_id, i) => ({
    token_id,
    logprob: logprobs[i],
    rank: 1,
    top_logprobs: [{ token_id, logprob: logprobs[i], rank: 1 }],
  }));
}

/** Server-sent `data:` chunks, then `[DONE]`; `hold` pauses the stream halfway. */
function eventStream(chunks: unknown[], headers: Headers, hold?: Promise<void>): Response {
  const encoder = new TextEncoder();
  const half = Math.ceil(chunks.length / 2);
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const [k, chunk] of chunks.entries()) {
        if (k === half && hold) await hold;
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
      }
      controller.enqueue(encoder.encode("data: [DONE]\n\n"));
      controller.close();
    },
  });
  return new Response(body, { headers });
}

/**
 * TEST DOUBLE of SGLang's native `POST /generate` (non-streaming, `input_ids`, `return_logprob`)
 * and `POST /abort_request {rid}` (`python/sglang/srt/entrypoints/http_server.py`).
 */
export class FakeSglang extends FakeEngine {
  protected generationPaths(): string[] {
    return ["/generate"];
  }
  /** Bodies of `/abort_request` calls. */
  readonly aborts = new Log<{ rid: string }>();

  protected override other(req: Request, path: string): Promise<Response> | undefined {
    if (path !== "/abort_request") return undefined;
    return (async () => {
      const body = await req.json();
      if (typeof body?.rid !== "string" || body.rid === "") {
        // SGLang matches rid as a prefix: an empty one would abort everything.
        return Response.json({ error: "rid must be a non-empty string" }, { status: 400 });
      }
      this.aborts.push(body);
      return new Response(null, { status: 200 });
    })();
  }

  protected override hangEnds(r: Received): Promise<unknown> {
    return this.aborts.when((a) => (r.body.rid as string).startsWith(a.rid));
  }

  protected problems(b: Record<string, unknown>): string[] {
    const p: string[] = [];
    if (!isIds(b.input_ids)) p.push("input_ids must be a non-empty list of token ids");
    if (typeof b.rid !== "string" || b.rid === "") p.push("rid must be a non-empty string");
    if (b.return_logprob !== true) p.push("return_logprob must be true");
    const s = (b.sampling_params ?? {}) as Record<string, unknown>;
    if (!Number.isInteger(s.max_new_tokens) || (s.max_new_tokens as number) < 1) {
      p.push("sampling_params.max_new_tokens");
    }
    if (!isIds(s.stop_token_ids)) p.push("sampling_params.stop_token_ids");
    if (s.skip_special_tokens !== false) {
      p.push("sampling_params.skip_special_tokens must be false");
    }
    if (s.no_stop_trim !== true) p.push("sampling_params.no_stop_trim must be true");
    const start = b.routed_experts_start_len;
    if (
      start !== undefined &&
      !(Number.isInteger(start) && (start as number) >= 0 &&
        (start as number) <= (b.input_ids as number[]).length)
    ) {
      p.push("routed_experts_start_len must be in [0, len(input_ids)]");
    }
    return p;
  }

  /**
   * With `--enable-return-routed-experts` (here: set): the model's layers and top-k. Routing of
   * position `p` (token `t`) is `expertOf(p, t, layer, k)` (`tests/support/sample_facts_check.ts`).
   */
  routedExperts?: { layers: number; topK: number };

  protected async answer(r: Received): Promise<unknown> {
    const { ids, text, logprobs } = await this.reply(r.body.input_ids);
    r.output = ids;
    const last = ids.at(-1)!;
    const stop = (r.body.sampling_params.stop_token_ids as number[]).includes(last);
    const routing: Record<string, unknown> = {};
    if (r.body.return_routed_experts === true && this.routedExperts) {
      const start = r.body.routed_experts_start_len ?? 0;
      const rows = expertRows(this.routedExperts, r.body.input_ids, ids, start);
      // SGLang sends int32 values, base64, with no shape (the model's layers and top-k).
      const int32 = Int32Array.from(rows.bytes);
      routing.routed_experts = Buffer.from(int32.buffer).toString("base64");
    }
    return {
      text,
      output_ids: ids,
      meta_info: {
        id: r.body.rid,
        finish_reason: stop
          ? { type: "stop", matched: last }
          : { type: "length", length: ids.length },
        prompt_tokens: r.body.input_ids.length,
        completion_tokens: ids.length,
        cached_tokens: 0,
        weight_version: this.weightVersion,
        output_token_logprobs: ids.map((id, i) => [logprobs[i], id, null]),
        ...routing,
      },
    };
  }

  protected override abortedAnswer(r: Received): Promise<unknown> {
    return Promise.resolve({
      text: "",
      output_ids: [],
      meta_info: {
        id: r.body.rid,
        finish_reason: { type: "abort", message: "Abort before prefill" },
        weight_version: this.weightVersion,
        output_token_logprobs: [],
      },
    });
  }
}
