/**
 * Trainer workers for load drivers, over HTTP as a real trainer works the gate: each loop
 * long-polls `GET /api/requests/next`, acknowledges the request, asks the scripted policy (the
 * TEST DOUBLE at the model boundary: real token ids, no model) for the output, and completes it.
 * Id arrays come in the transport the Python client asks for by default (`?ids=base64`) unless
 * told otherwise; the prompt ids are decoded as a trainer would before generating.
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
}

export interface TrainerLoops {
  stats: TrainerStats;
  /** Stops the loops (each after its current call) and resolves with the counts. */
  stop(): Promise<TrainerStats>;
}

const JSON_HEADERS = { "content-type": "application/json" };

function promptLength(body: { prompt_ids: number[] | string }): number {
  const ids = body.prompt_ids;
  if (typeof ids !== "string") return ids.length;
  // What a trainer does with the compact transport: little-endian int32 ids.
  const bytes = Buffer.from(ids, "base64");
  return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).length;
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

/** Starts `count` trainer loops against the gateway at `url`. */
export function startTrainerLoops(
  url: string,
  count: number,
  policy: (pending: PendingView) => ScriptedOutput | Promise<ScriptedOutput>,
  options: {
    ids?: "base64" | "json";
    adminToken?: string;
    /** Acknowledge each request before completing it (default true; releases before issue 8 had no `ack`). */
    ack?: boolean;
    /**
     * Send MoE routing with each completion (`routed_experts`, uint8 `[T, layers, top_k]` from
     * the request's `routed_experts_from`), as a trainer replaying an SGLang engine's would.
     */
    routing?: { layers: number; topK: number };
  } = {},
): TrainerLoops {
  const ids = options.ids ?? "base64";
  const auth: Record<string, string> = options.adminToken
    ? { authorization: `Bearer ${options.adminToken}` }
    : {};
  const stats: TrainerStats = { completed: 0, errors: 0, withdrawn: 0 };
  const stopping = new AbortController();
  const post = async (path: string, body: unknown): Promise<number> => {
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
    return res.status;
  };
  const loop = async () => {
    while (!stopping.signal.aborted) {
      try {
        const res = await fetch(`${url}/api/requests/next?wait=1&ids=${ids}`, {
          headers: auth,
          signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(30_000)]),
        });
        if (res.status === 204) {
          await res.body?.cancel();
          continue;
        }
        const body = await res.json();
        if (!res.ok) throw new Error(`next: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        const rid = body.request_id as string;
        if (options.ack !== false && await post(`/api/requests/${rid}/ack`, {}) !== 200) continue;
        const output = await policy({
          request_id: rid,
          rollout_id: body.rollout_id,
          turn_id: body.turn_id,
          promptLength: promptLength(body),
        });
        const rows = options.routing &&
          promptLength(body) + output.output_ids.length - 1 - body.routed_experts_from;
        const status = await post(`/api/requests/${rid}/complete`, {
          ...output,
          finish_reason: "stop",
          ...(options.routing ? { routed_experts: routingRows(options.routing, rows!) } : {}),
        });
        if (status === 200) stats.completed++;
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
