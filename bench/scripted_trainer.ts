/**
 * Trainer workers for load drivers, over HTTP as a real trainer works the gate: each loop
 * long-polls `GET /api/requests/next` for requests handed out already acknowledged (`ack=1`, as
 * the Python client asks; `ack: "call"`: the two-step form, `next` then `ack`, which every
 * release since issue 8 knows), asks the scripted policy (the
 * TEST DOUBLE at the model boundary: real token ids, no model) for the output, and completes it.
 * Id arrays come in the transport the Python client asks for by default (`?ids=base64`) unless
 * told otherwise; the prompt ids are decoded (and, in the delta form, rebuilt from the ids the
 * trainer kept) as a trainer would before generating.
 *
 * `form: "delta"` asks for prompts as the ids after a request this trainer took (as the Python
 * client does), keeping each chain's prompt and output; `batch: N` takes up to N requests per
 * `next` and acknowledges and completes them in one call each.
 *
 * @module
 */
import { Buffer } from "node:buffer";

/** What the scripted policy is told of a pending request. */
export interface PendingView {
  request_id: string;
  rollout_id: string;
  turn_id: string;
  /** Prompt length in ids (decoded from the body). */
  promptLength: number;
}

export interface ScriptedOutput {
  output_ids: number[];
  logprobs?: number[];
}

export interface TrainerStats {
  completed: number;
  /** Calls refused (other than a withdrawn request) and network errors. */
  errors: number;
  /** Requests withdrawn while the trainer held them (410). */
  withdrawn: number;
  /** Delta prompts whose base this trainer did not have (it asked for the whole prompt). */
  misses: number;
  /** Bytes of the `next` answers read. */
  nextBytes: number;
}

export interface TrainerLoops {
  stats: TrainerStats;
  /** Stops the loops (each after its current call) and resolves with the counts. */
  stop(): Promise<TrainerStats>;
}

const JSON_HEADERS = { "content-type": "application/json" };

/** Ids of the compact transport (little-endian int32) or of a JSON array. */
function idsOf(ids: number[] | string): Int32Array {
  if (typeof ids !== "string") return Int32Array.from(ids);
  const bytes = Buffer.from(ids, "base64");
  return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

/** `rows` rows of made-up expert ids (uint8 `[rows, layers, top_k]`), as `complete` takes them. */
export function routingRows(
  shape: { layers: number; topK: number },
  rows: number,
): { dtype: "uint8"; shape: number[]; data: string } {
  const bytes = new Uint8Array(rows * shape.layers * shape.topK);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 37) % 128;
  return {
    dtype: "uint8",
    shape: [rows, shape.layers, shape.topK],
    data: Buffer.from(bytes).toString("base64"),
  };
}

interface PendingBody {
  request_id: string;
  rollout_id: string;
  turn_id: string;
  prompt_ids: number[] | string;
  prompt_base?: { request_id: string; length: number };
  prompt_length?: number;
  routed_experts_from: number;
}

/** Starts `count` trainer loops against the gateway at `url`. */
export function startTrainerLoops(
  url: string,
  count: number,
  policy: (pending: PendingView) => ScriptedOutput | Promise<ScriptedOutput>,
  options: {
    ids?: "base64" | "json";
    adminToken?: string;
    /**
     * How each request is acknowledged: taken leased by `next?ack=1` (`"next"`, the default, as
     * the Python client asks), by an `ack` call after `next` (`"call"`, for a checkout without
     * that form), or not at all (`"none"`: releases before issue 8 had no `ack`).
     */
    ack?: "next" | "call" | "none";
    /**
     * Send MoE routing with each completion (`routed_experts`, uint8 `[T, layers, top_k]` from
     * the request's `routed_experts_from`), as a trainer replaying an SGLang engine's would.
     */
    routing?: { layers: number; topK: number };
    /** Prompts whole (default) or as deltas on what this trainer kept (issue 33). */
    form?: "full" | "delta";
    /** Requests per `next` (and per batched `ack`/`complete`); default 1, the single calls. */
    batch?: number;
  } = {},
): TrainerLoops {
  const ids = options.ids ?? "base64";
  const batch = options.batch ?? 1;
  const ack = options.ack ?? "next";
  const auth: Record<string, string> = options.adminToken
    ? { authorization: `Bearer ${options.adminToken}` }
    : {};
  const stats: TrainerStats = {
    completed: 0,
    errors: 0,
    withdrawn: 0,
    misses: 0,
    nextBytes: 0,
  };
  const stopping = new AbortController();
  const trainer = `bench-${crypto.randomUUID()}`;
  /** Each request's prompt and output once completed, for the next delta (one per chain). */
  const kept = new Map<string, Int32Array>();
  const query = `wait=1&ids=${ids}` +
    (options.form === "delta" ? `&prompt=delta&trainer=${trainer}` : "") +
    (batch > 1 ? `&max=${batch}` : "") + (ack === "next" ? "&ack=1" : "");
  const post = async (path: string, body: unknown): Promise<{ status: number; json?: unknown }> => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { ...JSON_HEADERS, ...auth },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (res.status === 410) stats.withdrawn++;
    else if (!res.ok) {
      if (++stats.errors <= 3) {
        console.error(`trainer ${path}: ${res.status} ${text.slice(0, 200)}`);
      }
    }
    return { status: res.status, json: res.ok ? JSON.parse(text) : undefined };
  };
  /** The whole prompt of a handed-out request: decoded, or rebuilt on the ids kept. */
  const promptOf = async (body: PendingBody): Promise<Int32Array> => {
    const tail = idsOf(body.prompt_ids);
    const base = body.prompt_base;
    if (!base) return tail;
    const known = kept.get(base.request_id);
    if (known && known.length >= base.length) {
      kept.delete(base.request_id); // the chain goes on from this request
      const whole = new Int32Array(base.length + tail.length);
      whole.set(known.subarray(0, base.length));
      whole.set(tail, base.length);
      return whole;
    }
    stats.misses++;
    const res = await fetch(`${url}/api/requests/${body.request_id}/prompt?ids=${ids}`, {
      headers: auth,
      signal: AbortSignal.timeout(60_000),
    });
    if (!res.ok) throw new Error(`prompt: ${res.status} ${await res.text()}`);
    return idsOf((await res.json()).prompt_ids);
  };
  const outputFor = async (body: PendingBody) => {
    const prompt = await promptOf(body);
    const output = await policy({
      request_id: body.request_id,
      rollout_id: body.rollout_id,
      turn_id: body.turn_id,
      promptLength: prompt.length,
    });
    const rows = options.routing &&
      prompt.length + output.output_ids.length - 1 - body.routed_experts_from;
    const completion = {
      ...output,
      finish_reason: "stop",
      ...(options.routing ? { routed_experts: routingRows(options.routing, rows!) } : {}),
    };
    return { prompt, completion };
  };
  /** Keeps a completed request's prompt and output: the next turn of its chain extends them. */
  const keep = (rid: string, prompt: Int32Array, output: number[]) => {
    if (options.form !== "delta") return;
    const line = new Int32Array(prompt.length + output.length);
    line.set(prompt);
    line.set(output, prompt.length);
    kept.set(rid, line);
    // Bounded as the Python client's: chains that ended leave their last entry behind.
    if (kept.size > 4096) kept.delete(kept.keys().next().value!);
  };
  const one = async (body: PendingBody) => {
    const rid = body.request_id;
    if (ack === "call" && (await post(`/api/requests/${rid}/ack`, {})).status !== 200) {
      return;
    }
    const { prompt, completion } = await outputFor(body);
    if ((await post(`/api/requests/${rid}/complete`, completion)).status === 200) {
      stats.completed++;
      keep(rid, prompt, completion.output_ids);
    }
  };
  const several = async (bodies: PendingBody[]) => {
    let taken = bodies;
    if (ack === "call") {
      const acked = await post("/api/requests/ack", {
        request_ids: bodies.map((b) => b.request_id),
      });
      const results = (acked.json as { results: { request_id: string; error?: unknown }[] })
        ?.results ?? [];
      const ok = new Set(results.filter((r) => !r.error).map((r) => r.request_id));
      taken = bodies.filter((b) => ok.has(b.request_id));
    }
    const outputs = await Promise.all(taken.map(outputFor));
    if (outputs.length === 0) return;
    const done = await post("/api/requests/complete", {
      completions: outputs.map(({ completion }, k) => ({
        request_id: taken[k].request_id,
        ...completion,
      })),
    });
    const results = (done.json as { results: { error?: { type: string } }[] })?.results ?? [];
    results.forEach((r, k) => {
      if (!r.error) {
        stats.completed++;
        keep(taken[k].request_id, outputs[k].prompt, outputs[k].completion.output_ids);
      } else if (r.error.type === "gone") stats.withdrawn++;
      else if (++stats.errors <= 3) console.error(`trainer complete: ${JSON.stringify(r)}`);
    });
  };
  const loop = async () => {
    while (!stopping.signal.aborted) {
      try {
        const res = await fetch(`${url}/api/requests/next?${query}`, {
          headers: auth,
          signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(30_000)]),
        });
        if (res.status === 204) {
          await res.body?.cancel();
          continue;
        }
        const text = await res.text();
        stats.nextBytes += text.length;
        if (!res.ok) throw new Error(`next: ${res.status} ${text.slice(0, 200)}`);
        const body = JSON.parse(text);
        if (batch > 1) await several(body.requests);
        else await one(body);
      } catch (e) {
        if (stopping.signal.aborted) break;
        if (++stats.errors <= 3) console.error(`trainer: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  const loops = Array.from({ length: count }, loop);
  return {
    stats,
    async stop() {
      stopping.abort();
      await Promise.all(loops);
      return stats;
    },
  };
}
