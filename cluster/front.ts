/**
 * What a replica does with a call before its own gateway sees it, so that any replica answers
 * any call and a balancer needs nothing sticky:
 *
 * - a call about one rollout (the agent's `/rollout/:id/…`, `/v1/…` with the rollout's token,
 *   and `/api/rollouts/:id…`) is served here when this replica owns the rollout, forwarded to the
 *   owner when its lease is live (the response streams through as it is), or taken over when
 *   the lease lapsed, then served here;
 * - `POST /api/rollouts` reserves the id gateway-wide first (this replica becomes the owner);
 * - `GET /api/rollouts` and `GET /api/status` gather every live replica's answer;
 * - `POST /api/pause|resume` set the pause for every replica;
 * - `GET /_cluster/requests/:rid`: the prompt of a request this replica holds, for a trainer's
 *   long poll answered by another replica.
 *
 * Everything else (the trainer's requests, samples, the viewer …) is the gateway's own: its
 * queue and journal are the shared database.
 *
 * @module
 */
import type { PendingRequest } from "../generation/mod.ts";
import {
  anthropicAdapter,
  openaiChatAdapter,
  pendingBody,
  responsesAdapter,
  sameToken,
} from "../gateway/mod.ts";
import type { Owner } from "./ownership.ts";

/** Marks a call one replica passed to another (never passed on again). */
export const FORWARDED = "x-rollgate-forwarded-by";
/** Asks a replica for its own part only (a gathered list or status). */
export const LOCAL_ONLY = "x-rollgate-local";

type Handler = (req: Request, info?: unknown) => Promise<Response>;

export interface FrontOptions {
  replica: string;
  adminToken?: string;
  maxBodyBytes: number;
  /** This replica's gateway. */
  local: Handler;
  /** This replica holds the rollout (it owns it and has it in memory). */
  holds(id: string): boolean;
  lookup(by: { id: string } | { tokenHash: string }): Promise<Owner | undefined>;
  /** Takes over a rollout whose owner's lease lapsed; false when another replica moved first. */
  takeOver(seen: Owner): Promise<boolean>;
  /** The takeover of `id` under way here, if any. */
  takingOver(id: string): Promise<boolean> | undefined;
  reserve(id: string): Promise<number | undefined>;
  unreserve(id: string): Promise<void>;
  setPaused(paused: boolean): Promise<void>;
  /** URLs of the other live replicas. */
  peers(): Promise<string[]>;
  /** A request this replica holds. */
  request(requestId: string): PendingRequest | undefined;
  /** A request asked of this replica that it does not hold: reaped if its turn is over. */
  unheld(requestId: string): Promise<void>;
  tokenHash(token: string): string;
}

function json(status: number, type: string, message: string): Response {
  return Response.json({ error: { type, message } }, { status });
}

/** A 503 (agents and trainers retry it) in the shape of the protocol the path speaks. */
function unavailable(message: string, path = ""): Response {
  if (path.endsWith("/messages") || path.endsWith("/count_tokens")) {
    return Response.json(anthropicAdapter.errorBody(503, message), { status: 503 });
  }
  if (path.endsWith("/chat/completions")) {
    return Response.json(openaiChatAdapter.errorBody(503, message), { status: 503 });
  }
  if (path.endsWith("/responses")) {
    return Response.json(responsesAdapter.errorBody(503, message), { status: 503 });
  }
  return json(503, "unavailable", message);
}

/** The rollout a path names (an agent call, or a trainer call about one rollout). */
function rolloutOfPath(path: string): string | undefined {
  return /^\/rollout\/([^/]+)\//.exec(path)?.[1] ?? /^\/api\/rollouts\/([^/]+)/.exec(path)?.[1];
}

function bearer(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth?.toLowerCase().startsWith("bearer ")) return auth.slice(7).trim();
  return headers.get("x-api-key");
}

export function clusterFront(o: FrontOptions): Handler {
  const admin = (req: Request) =>
    !o.adminToken || sameToken(bearer(req.headers) ?? "", o.adminToken);

  const body = async (req: Request): Promise<ArrayBuffer | null> => {
    if (req.method === "GET" || req.method === "HEAD" || !req.body) return null;
    const bytes = await req.arrayBuffer();
    if (bytes.byteLength > o.maxBodyBytes) {
      throw new Error(`the request body is over ${o.maxBodyBytes} bytes`);
    }
    return bytes;
  };

  const forward = async (base: string, req: Request, bytes: ArrayBuffer | null) => {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.delete("host");
    headers.delete("content-length");
    headers.set(FORWARDED, o.replica);
    const res = await fetch(base.replace(/\/$/, "") + url.pathname + url.search, {
      method: req.method,
      headers,
      body: bytes,
      signal: req.signal,
      redirect: "manual",
    });
    return new Response(res.body, { status: res.status, headers: res.headers });
  };

  const again = (req: Request, bytes: ArrayBuffer | null) =>
    new Request(req.url, {
      method: req.method,
      headers: req.headers,
      body: bytes,
      signal: req.signal,
    });

  /** Serves, forwards or takes over a call about one rollout. */
  const byOwner = async (
    req: Request,
    info: unknown,
    by: { id: string } | { tokenHash: string },
  ): Promise<Response> => {
    if ("id" in by && o.holds(by.id)) return o.local(req, info);
    const bytes = await body(req);
    const path = new URL(req.url).pathname;
    for (let attempt = 0; attempt < 3; attempt++) {
      const owner = await o.lookup(by);
      // Unknown (or expired): the gateway says so in its own words.
      if (!owner) return o.local(again(req, bytes), info);
      if (owner.owner === o.replica) await o.takingOver(owner.id); // claimed, still restoring
      if (o.holds(owner.id)) return o.local(again(req, bytes), info);
      if (owner.live && owner.ownerUrl && owner.owner !== o.replica) {
        if (req.headers.has(FORWARDED)) {
          return unavailable(`rollout ${owner.id} moved to another replica; retry`, path);
        }
        try {
          return await forward(owner.ownerUrl, req, bytes);
        } catch {
          if (req.signal.aborted) return unavailable("the client went away", path);
          return unavailable(
            `the replica holding rollout ${owner.id} does not answer; its rollouts move to another replica once its lease lapses; retry`,
            path,
          );
        }
      }
      if (await o.takeOver(owner) && o.holds(owner.id)) return o.local(again(req, bytes), info);
    }
    return unavailable(
      `rollout ${"id" in by ? by.id : ""} is moving between replicas; retry`,
      path,
    );
  };

  const gather = async (req: Request, info?: unknown) => {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.set(LOCAL_ONLY, "1");
    const mine = o.local(new Request(req.url, { headers, signal: req.signal }), info);
    const theirs = (await o.peers()).map((peer) =>
      fetch(peer.replace(/\/$/, "") + url.pathname + url.search, {
        headers,
        signal: AbortSignal.any([req.signal, AbortSignal.timeout(10_000)]),
      }).then((r) => r.ok ? r.json() : null).catch(() => null)
    );
    const first = await mine;
    if (!first.ok) return first;
    return { first: await first.json(), others: (await Promise.all(theirs)).filter(Boolean) };
  };

  const create = async (req: Request, info?: unknown) => {
    const bytes = await body(req);
    let spec: Record<string, unknown>;
    try {
      spec = JSON.parse(new TextDecoder().decode(bytes ?? new ArrayBuffer(0)) || "{}");
    } catch {
      return o.local(again(req, bytes), info); // the gateway says what is wrong with it
    }
    if (typeof spec !== "object" || spec === null || Array.isArray(spec)) {
      return o.local(again(req, bytes), info);
    }
    if (typeof spec.id !== "string") {
      spec.id = `r_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
    }
    const id = spec.id as string;
    if (await o.reserve(id) === undefined) {
      return json(409, "conflict", `rollout ${id} already exists`);
    }
    const res = await o.local(
      new Request(req.url, {
        method: "POST",
        headers: req.headers,
        body: JSON.stringify(spec),
        signal: req.signal,
      }),
      info,
    );
    if (res.status !== 201) await o.unreserve(id);
    return res;
  };

  return async (req, info) => {
    const url = new URL(req.url);
    const path = url.pathname;
    try {
      if (path.startsWith("/_cluster/requests/") && req.method === "GET") {
        if (!admin(req)) return json(401, "unauthorized", "the admin token is required");
        const rid = decodeURIComponent(path.slice("/_cluster/requests/".length));
        const r = o.request(rid);
        if (!r) {
          await o.unheld(rid);
          return json(404, "not_found", "this replica holds no such request");
        }
        return new Response(pendingBody(r, "base64"), {
          headers: { "content-type": "application/json" },
        });
      }
      const isApi = path.startsWith("/api/");
      if (isApi && !admin(req)) return o.local(req, info); // the gateway refuses it
      if (path === "/api/rollouts" && req.method === "POST") return await create(req, info);
      if (path === "/api/rollouts" && req.method === "GET" && !req.headers.has(LOCAL_ONLY)) {
        const got = await gather(req, info);
        if (got instanceof Response) return got;
        const seen = new Set<string>();
        const rollouts = [got.first, ...got.others].flatMap((r) => r.rollouts ?? [])
          .filter((r: { id: string }) => !seen.has(r.id) && seen.add(r.id));
        return Response.json({ rollouts });
      }
      if (path === "/api/status" && req.method === "GET" && !req.headers.has(LOCAL_ONLY)) {
        const got = await gather(req, info);
        if (got instanceof Response) return got;
        const all = [got.first, ...got.others];
        return Response.json({
          ...got.first,
          in_flight: all.reduce((n, s) => n + (s.in_flight ?? 0), 0),
          held: all.reduce((n, s) => n + (s.held ?? 0), 0),
          replicas: all.length,
        });
      }
      if ((path === "/api/pause" || path === "/api/resume") && req.method === "POST") {
        // Answered here first: a refused call (a bad body) changes nothing for the others.
        const res = await o.local(req, info);
        if (res.ok) await o.setPaused(path === "/api/pause");
        return res;
      }
      // A long poll for one rollout's requests is the owner's to answer (it checks the id).
      const only = path === "/api/requests/next" ? url.searchParams.get("rollout") : null;
      const id = only ?? rolloutOfPath(path);
      if (id !== undefined) return await byOwner(req, info, { id: decodeURIComponent(id) });
      if (path.startsWith("/v1/")) {
        const token = bearer(req.headers);
        if (token) return await byOwner(req, info, { tokenHash: o.tokenHash(token) });
      }
      return o.local(req, info);
    } catch (e) {
      return unavailable(`${(e as Error).message}; retry`, path);
    }
  };
}
