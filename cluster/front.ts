/**
 * What a replica does with a call before its own gateway sees it, so that any replica answers
 * any call and a balancer needs nothing sticky:
 *
 * - a call about one rollout (which calls are, and how each is refused, comes from the gateway's
 *   route tables, `rolloutCall`) is checked first, before any byte of its body is read: the
 *   rollout's token (or the admin token) as one gateway checks it, then its body cap. It is then
 *   served here when this replica holds the rollout, passed on to the owner (the response streams
 *   through), or taken over and served here when the owner is gone;
 * - a call whose owner does not answer is held, not refused: until the owner answers again, or
 *   the rollout moves (at once when the owner is found gone, `owner_probe.ts`; else once its lease
 *   lapsed), then served wherever it went; a streamed call held past the stream head hold gets
 *   its head and SSE comments meanwhile (`held_stream.ts`). Only past `holdMs` of no answer
 *   does it get a 503 in its protocol;
 * - `POST /api/rollouts` reserves the id gateway-wide first (this replica becomes the owner);
 * - `GET /api/rollouts` and `GET /api/status` gather every live replica's answer;
 * - `POST /api/pause|resume` set the pause for every replica;
 * - `GET /_cluster/requests/:rid`: the prompt of a request this replica holds, for a trainer's
 *   long poll answered by another replica; `GET /_cluster/replica`: who answers here.
 *
 * Everything else (the trainer's requests, samples, the viewer …) is the gateway's own: its
 * queue and journal are the shared database.
 *
 * @module
 */
import type { PendingRequest } from "../generation/mod.ts";
import {
  agentAccess,
  type GatewayLimits,
  httpStatus,
  pendingBody,
  presentedToken,
  readBodyBytes,
  type RolloutCall,
  rolloutCall,
  sameToken,
} from "../gateway/mod.ts";
import type { Owner } from "../journal/mod.ts";
import { heldStream, isEventStream } from "./held_stream.ts";
import { WHO_PATH } from "./owner_probe.ts";

/** Marks a call one replica passed to another (never passed on again). */
export const FORWARDED = "x-rollgate-forwarded-by";
/** A passed-on call reached a replica that does not hold its rollout: look its owner up again. */
export const MOVED = "x-rollgate-moved";
/** On an answer passed on from the owner: which replica it came from. */
export const PASSED_ON = "x-rollgate-answered-by";
/** Asks a replica for its own part only (a gathered list or status). */
export const LOCAL_ONLY = "x-rollgate-local";

/** Between two looks at a held call's rollout. */
const RETRY_MS = 200;
/** While a call waits for a live owner's answer, how often its ownership is looked at again. */
const WATCH_MS = 1_000;

type Handler = (req: Request, info?: unknown) => Promise<Response>;
type By = { id: string } | { tokenHash: string };

export interface FrontOptions {
  replica: string;
  adminToken?: string;
  limits: Pick<GatewayLimits, "maxBodyBytes" | "maxToolBodyBytes" | "maxTrainerBodyBytes">;
  /** Keep-alive comments of a held stream. */
  keepAliveMs: number;
  /**
   * How long a held stream's head waits for its answer before it is written (then comments keep
   * it open): a head written is an answer this replica must deliver, or the agent's SDK, which
   * retries a failed request but not a broken stream, sees its death.
   */
  streamHeadHoldMs: number;
  /** How long a call waits without an answer for its rollout to be served again. */
  holdMs: number;
  /** This replica's gateway. */
  local: Handler;
  /** This replica holds the rollout (it owns it and has it in memory). */
  holds(id: string): boolean;
  lookup(by: By): Promise<Owner | undefined>;
  /** Whether replica `id` beats (a rollout it owns cannot move while it does). */
  beating(id: string): Promise<boolean>;
  /**
   * Takes over a rollout (`gone`: its owner was found gone, lease or not; else only once its lease
   * lapsed); false when it could not (yet) or another replica moved first.
   */
  takeOver(seen: Owner, gone: boolean): Promise<boolean>;
  /** The takeover of `id` under way here, if any. */
  takingOver(id: string): Promise<boolean> | undefined;
  /** Whether the replica `id` at `url` is gone (its address refuses connections …). */
  gone(replica: { id: string; url: string }): Promise<boolean>;
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

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });

export function clusterFront(o: FrontOptions): Handler {
  const admin = (req: Request) =>
    !o.adminToken || sameToken(presentedToken(req.headers), o.adminToken);

  const buffered = async (req: Request, max: number): Promise<Uint8Array<ArrayBuffer> | null> =>
    req.method === "GET" || req.method === "HEAD" ? null : await readBodyBytes(req, max);

  const again = (req: Request, bytes: Uint8Array<ArrayBuffer> | null) =>
    new Request(req.url, {
      method: req.method,
      headers: req.headers,
      body: bytes,
      signal: req.signal,
    });

  /**
   * Passes the call on to `owner`; the answer, or undefined when the owner did not answer or its
   * rollout moved while it waited (watched every second until the answer's head comes).
   */
  const forward = async (
    owner: Owner,
    by: By,
    req: Request,
    bytes: Uint8Array<ArrayBuffer> | null,
  ): Promise<Response | undefined> => {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.delete("host");
    headers.delete("content-length");
    headers.set(FORWARDED, o.replica);
    const moved = new AbortController();
    // While the owner beats its rollout cannot move: only a silent owner's rollout is looked at.
    const watch = setInterval(async () => {
      if (await o.beating(owner.owner!).catch(() => true)) return;
      const now = await o.lookup(by).catch(() => owner);
      if (!now || !now.live || now.epoch !== owner.epoch) moved.abort();
    }, WATCH_MS);
    try {
      const res = await fetch(owner.ownerUrl!.replace(/\/$/, "") + url.pathname + url.search, {
        method: req.method,
        headers,
        body: bytes,
        signal: AbortSignal.any([req.signal, moved.signal]),
        redirect: "manual",
      });
      if (res.headers.has(MOVED)) {
        await res.body?.cancel();
        return undefined;
      }
      const passed = new Headers(res.headers);
      passed.set(PASSED_ON, owner.owner!);
      return new Response(res.body, { status: res.status, headers: passed });
    } catch {
      return undefined;
    } finally {
      clearInterval(watch);
    }
  };

  /**
   * Serves the call wherever its rollout is: here, at its owner, or here after taking it over;
   * held while nobody answers, up to `holdMs`.
   */
  const route = async (
    req: Request,
    info: unknown,
    call: RolloutCall,
    by: By,
    bytes: Uint8Array<ArrayBuffer> | null,
    seen: Owner | undefined,
  ): Promise<Response> => {
    let owner = seen;
    // The bound counts the time nobody answered, not a live owner's wait for its trainer.
    let deadline = Date.now() + o.holdMs;
    for (;;) {
      // Unknown (or expired): the gateway says so in its own words.
      if (!owner) return await o.local(again(req, bytes), info);
      if (owner.owner === o.replica) await o.takingOver(owner.id); // claimed, still restoring
      if (o.holds(owner.id)) return await o.local(again(req, bytes), info);
      if (owner.live && owner.ownerUrl && owner.owner !== o.replica) {
        // Passed on once only: the replica that passed it looks the owner up again.
        if (req.headers.has(FORWARDED)) {
          return new Response(null, { status: 503, headers: { [MOVED]: "1" } });
        }
        const sent = Date.now();
        const res = await forward(owner, by, req, bytes);
        if (res) return res;
        deadline += Date.now() - sent;
        if (req.signal.aborted) return new Response(null, { status: 499 });
        if (
          await o.gone({ id: owner.owner!, url: owner.ownerUrl }) && await o.takeOver(owner, true)
        ) {
          continue;
        }
      } else if (await o.takeOver(owner, false)) continue;
      if (Date.now() > deadline) {
        return Response.json(
          call.errors.errorBody(
            503,
            `rollout ${owner.id}: its replica did not answer and the rollout did not move to another within ${
              o.holdMs / 1000
            } s; retry`,
          ),
          { status: 503 },
        );
      }
      await sleep(RETRY_MS, req.signal);
      owner = await o.lookup(by);
    }
  };

  /** A call about one rollout: checked before its body is read, then routed (and held). */
  const byOwner = async (req: Request, info: unknown, call: RolloutCall): Promise<Response> => {
    if (call.id !== undefined && o.holds(call.id)) return await o.local(req, info);
    const refuse = (status: number, message: string) =>
      Response.json(call.errors.errorBody(status, message), { status });
    const by: By | undefined = call.id !== undefined
      ? { id: call.id }
      : call.token
      ? { tokenHash: o.tokenHash(call.token) }
      : undefined;
    // No rollout named (a bare agent path without a token): the gateway refuses it, reading nothing.
    if (!by) return await o.local(req, info);
    const owner = await o.lookup(by);
    if (call.caller === "agent" && call.id !== undefined) {
      const hash = call.token ? o.tokenHash(call.token) : undefined;
      const opens = !hash
        ? undefined
        : owner?.tokenHash === hash
        ? owner.id
        : (await o.lookup({ tokenHash: hash }))?.id;
      const refused = call.token && o.adminToken && sameToken(call.token, o.adminToken)
        ? undefined
        : agentAccess(call.id, call.token, opens, o.adminToken);
      if (refused) return refuse(httpStatus(refused) ?? 403, refused.message);
    }
    if (!owner) return await o.local(req, info);
    let bytes: Uint8Array<ArrayBuffer> | null;
    try {
      bytes = await buffered(req, call.maxBodyBytes);
    } catch (e) {
      const status = httpStatus(e);
      if (status === undefined) throw e;
      return refuse(status, (e as Error).message);
    }
    const first = route(req, info, call, by, bytes, owner);
    if (!call.errors.streamErrorEvents || !bytes) return await first;
    // A stream: its head goes out with its answer, or once the head hold is over.
    const since = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const quiet = new Promise<undefined>((r) =>
      timer = setTimeout(() => r(undefined), o.streamHeadHoldMs)
    );
    const early = await Promise.race([first, quiet]).finally(() => clearTimeout(timer));
    // An owner's stream passed on may still break with the owner: routed again if so.
    const passedOn = early && isEventStream(early) && early.headers.has(PASSED_ON);
    if (early && !passedOn) return early;
    let streams = false;
    try {
      streams = call.streams(JSON.parse(new TextDecoder().decode(bytes)));
    } catch { /* not JSON: the owner says so */ }
    if (!streams) return early ?? await first;
    return await heldStream({
      first,
      route: async () => route(req, info, call, by, bytes, await o.lookup(by)),
      errors: call.errors,
      keepAliveMs: o.keepAliveMs,
      holdMs: Math.max(0, o.streamHeadHoldMs - (Date.now() - since)),
    });
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
    const bytes = await buffered(req, o.limits.maxTrainerBodyBytes);
    let spec: Record<string, unknown>;
    try {
      spec = JSON.parse(new TextDecoder().decode(bytes ?? new Uint8Array()) || "{}");
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
    let call: RolloutCall | undefined;
    try {
      if (path === WHO_PATH && req.method === "GET") return Response.json({ replica: o.replica });
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
      if (isApi && !admin(req)) return await o.local(req, info); // the gateway refuses it
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
      call = rolloutCall(url, req.headers, o.limits);
      if (call) return await byOwner(req, info, call);
      return await o.local(req, info);
    } catch (e) {
      const message = `${(e as Error).message}; retry`;
      return call
        ? Response.json(call.errors.errorBody(503, message), { status: 503 })
        : json(503, "unavailable", message);
    }
  };
}
