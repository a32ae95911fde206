/**
 * The interception gate of a gateway made of replicas: its pending requests live in PostgreSQL
 * (`pending`), so a trainer on any replica takes, acknowledges, appends to, completes or fails
 * any request; the agent's connection stays on the replica that owns the rollout, which holds
 * the prompt and answers the agent.
 *
 * - The owner (`generate`) inserts the request `queued` and waits; a restored turn finds its row
 *   (and a completion accepted before the crash) under the same request id.
 * - `next` claims the oldest request whose owner is alive with `FOR UPDATE SKIP LOCKED` (a
 *   request whose delivery or lease deadline passed comes first again); the prompt comes from
 *   the owner (`body`), over HTTP when that is another replica.
 * - `complete` and `fail` are one conditional statement each: the request leaves an open state
 *   and the turn's `request_completed`/`request_failed` event is written, in one transaction, or
 *   nothing happens and the caller learns why (409 already resolved, 410 withdrawn). Two trainers
 *   racing on two replicas: exactly one wins.
 * - The owner learns of a resolution by NOTIFY on its channel, and by polling its waiting
 *   requests every second (notifications are not replayed after a reconnect).
 *
 * @module
 */
import type { Sql } from "postgres";
import { Buffer } from "node:buffer";
import {
  abortError,
  type Completion,
  GateError,
  type GateStats,
  GenerationError,
  type GenerationRequest,
  type Lease,
  type PendingRequest,
  type RequestQueue,
} from "../generation/mod.ts";
import { isConnectionError, packArrays, unpackArrays } from "../journal/mod.ts";
import { GatewayError } from "../gateway/mod.ts";

const OPEN = ["queued", "delivered", "leased"];

interface Waiting {
  request: PendingRequest;
  resolve(c: Completion): void;
  reject(e: Error): void;
  onTokens?: (ids: number[]) => void;
  /** Appended ids already passed to `onTokens`. */
  seen: number;
  settled: boolean;
}

export interface ClusterGateOptions {
  sql: Sql;
  replica: string;
  ackTimeoutMs: number;
  defaultLeaseMs: number;
  maxLeaseMs: number;
  /** Waits for the journal's queued writes (a request is offered once its turn is durable). */
  flushed(): Promise<void>;
  /**
   * A request another replica holds (its prompt), asked of that replica; null when it does not
   * hold it (any more), undefined when it did not answer.
   */
  fetchRequest(ownerUrl: string, requestId: string): Promise<PendingRequest | null | undefined>;
}

function idBytes(ids: readonly number[]): Buffer {
  const b = Buffer.alloc(ids.length * 4);
  for (let i = 0; i < ids.length; i++) b.writeInt32LE(ids[i], i * 4);
  return b;
}

function idsOf(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}

export class ClusterGate implements RequestQueue {
  readonly name = "gate";
  readonly #waiting = new Map<string, Waiting>();
  readonly #wakeups = new Set<() => void>();
  readonly #poll: ReturnType<typeof setInterval>;

  constructor(readonly o: ClusterGateOptions) {
    this.#poll = setInterval(() => this.#pollWaiting().catch(() => {}), 1000);
  }

  close(): void {
    clearInterval(this.#poll);
  }

  /** The prompt of a request this replica holds, or undefined. */
  local(requestId: string): PendingRequest | undefined {
    return this.#waiting.get(requestId)?.request;
  }

  /** Requests waiting on this replica. */
  get waitingCount(): number {
    return this.#waiting.size;
  }

  generate(req: GenerationRequest): Promise<Completion> {
    return new Promise<Completion>((resolve, reject) => {
      if (req.signal?.aborted) return reject(abortError(req.signal, "the agent disconnected"));
      const w: Waiting = {
        request: {
          request_id: req.requestId,
          rollout_id: req.rolloutId,
          turn_id: req.turnId,
          prompt_ids: req.promptIds,
          sampling: req.sampling,
        },
        resolve,
        reject,
        onTokens: req.onTokens,
        seen: 0,
        settled: false,
      };
      this.#waiting.set(req.requestId, w);
      const gone = () => this.#withdraw(w, abortError(req.signal!, "the agent disconnected"));
      req.signal?.addEventListener("abort", gone, { once: true });
      const settle = (fn: () => void) => {
        req.signal?.removeEventListener("abort", gone);
        this.#waiting.delete(req.requestId);
        fn();
      };
      w.resolve = (c) => settle(() => resolve(c));
      w.reject = (e) => settle(() => reject(e));
      this.#enqueue(w).catch((e) => this.#settle(w, () => w.reject(unreachable(e))));
    });
  }

  async #enqueue(w: Waiting): Promise<void> {
    await this.o.flushed();
    const r = w.request;
    const [row] = await this.o.sql<{ inserted: boolean }[]>`
      WITH ins AS (
        INSERT INTO pending (request_id, rollout, turn_id, state, lease_ms, max_tokens)
        VALUES (${r.request_id}, ${r.rollout_id}, ${r.turn_id}, 'queued',
          ${this.o.defaultLeaseMs}, ${r.sampling.max_tokens})
        ON CONFLICT (request_id) DO NOTHING
        RETURNING request_id
      )
      SELECT count(*) > 0 AS inserted, pg_notify('rollgate_queue', '') FROM ins`;
    // A restored turn's request may have been resolved before the crash.
    if (!row.inserted) await this.resolved(r.request_id);
  }

  #settle(w: Waiting, fn: () => void): void {
    if (w.settled) return;
    w.settled = true;
    fn();
  }

  /** The agent is gone: the request is withdrawn, unless a trainer resolved it first. */
  async #withdraw(w: Waiting, error: GenerationError): Promise<void> {
    if (w.settled) return;
    try {
      const [row] = await this.o.sql`
        UPDATE pending SET state = 'withdrawn', reason = ${error.message}, resolved_at = now()
        WHERE request_id = ${w.request.request_id} AND state IN ${this.o.sql(OPEN)}
        RETURNING request_id`;
      if (!row) return void await this.resolved(w.request.request_id);
    } catch { /* the database is away: the request stays for a restore */ }
    this.#settle(w, () => w.reject(error));
  }

  /** Reads a request this replica waits on and settles it if it was resolved. */
  async resolved(requestId: string): Promise<void> {
    const w = this.#waiting.get(requestId);
    if (!w || w.settled) return;
    const [row] = await this.o.sql<
      {
        state: string;
        reason: string | null;
        appended: Uint8Array;
        data: string | null;
        arrays: Uint8Array | null;
      }[]
    >`
      SELECT p.state, p.reason, p.appended, e.data, e.arrays FROM pending p
      LEFT JOIN events e ON e.rollout = p.rollout AND e.ref = p.request_id
        AND e.kind IN ('request_completed', 'request_failed')
      WHERE p.request_id = ${requestId}`;
    if (!row) return;
    if (w.onTokens && row.appended.byteLength / 4 > w.seen) {
      const ids = idsOf(row.appended).slice(w.seen);
      w.seen += ids.length;
      w.onTokens(ids);
    }
    if (row.state === "completed" && row.data) {
      const data = JSON.parse(row.data);
      const arrays = row.arrays ? unpackArrays(row.arrays) : {};
      const completion: Completion = {
        output_ids: arrays.output_ids ?? [],
        finish_reason: data.finish_reason,
      };
      if (arrays.logprobs) completion.logprobs = arrays.logprobs;
      if (data.weight_version !== undefined) completion.weight_version = data.weight_version;
      this.#settle(w, () => w.resolve(completion));
    } else if (row.state === "failed" && row.data) {
      const data = JSON.parse(row.data);
      this.#settle(
        w,
        () => w.reject(new GenerationError("trainer_failed", data.error, data.status ?? undefined)),
      );
    } else if (row.state === "withdrawn") {
      this.#settle(
        w,
        () => w.reject(new GenerationError("cancelled", row.reason ?? "the request was withdrawn")),
      );
    }
  }

  async #pollWaiting(): Promise<void> {
    const ids = [...this.#waiting.keys()];
    if (ids.length === 0) return;
    const rows = await this.o.sql<{ request_id: string }[]>`
      SELECT request_id FROM pending WHERE request_id = ANY(${ids})
        AND (state NOT IN ${this.o.sql(OPEN)} OR length(appended) > 0)`;
    for (const r of rows) await this.resolved(r.request_id);
  }

  /** A new request was queued: one long poll here looks (each replica is told). */
  wake(): void {
    const first = this.#wakeups.values().next();
    if (!first.done) {
      this.#wakeups.delete(first.value);
      first.value();
    }
  }

  /**
   * Claims the oldest request (optionally of one rollout) whose owner is alive, waiting up to
   * `waitMs`.
   */
  async #next(
    waitMs: number,
    rollout: string | undefined,
    signal: AbortSignal | undefined,
    leaseMs: number,
  ): Promise<PendingRequest | null> {
    this.checkLease(leaseMs);
    const deadline = Date.now() + waitMs;
    for (;;) {
      let wake!: () => void;
      const woke = new Promise<void>((r) => wake = r);
      this.#wakeups.add(wake);
      try {
        const claimed = await this.#claim(rollout, leaseMs);
        if (claimed) {
          const request = await this.#request(claimed.request_id, claimed.owner, claimed.owner_url);
          if (request) return request;
          // Its owner does not hold it yet (a takeover is restoring it) or did not answer: it
          // is offered again a second later.
          await this.o.sql`
            UPDATE pending SET deadline = now() + interval '1 second'
            WHERE request_id = ${claimed.request_id} AND state = 'delivered'`;
        }
        const left = deadline - Date.now();
        if (left <= 0 || signal?.aborted) return null;
        let timer: ReturnType<typeof setTimeout> | undefined;
        let onAbort: (() => void) | undefined;
        await Promise.race([
          woke,
          new Promise<void>((r) => signal?.addEventListener("abort", onAbort = () => r())),
          // Poll fallback: a notification lost on a reconnect, a deadline that passed.
          new Promise<void>((r) => timer = setTimeout(r, Math.min(left, claimed ? 200 : 1000))),
        ]);
        clearTimeout(timer);
        if (onAbort) signal?.removeEventListener("abort", onAbort);
      } finally {
        this.#wakeups.delete(wake);
      }
    }
  }

  async #claim(rollout: string | undefined, leaseMs: number) {
    const [row] = await this.o.sql<{ request_id: string; owner_url: string; owner: string }[]>`
      WITH c AS (
        SELECT p.request_id FROM pending p JOIN rollouts r ON r.id = p.rollout
        WHERE (p.state = 'queued' OR (p.state IN ('delivered', 'leased') AND p.deadline < now()))
          AND r.lease_until > now()
          ${rollout === undefined ? this.o.sql`` : this.o.sql`AND p.rollout = ${rollout}`}
        ORDER BY p.state = 'queued', p.seq
        LIMIT 1
        FOR UPDATE OF p SKIP LOCKED
      )
      UPDATE pending p SET state = 'delivered', epoch = p.epoch + 1, lease_ms = ${leaseMs},
        deadline = now() + make_interval(secs => ${this.o.ackTimeoutMs / 1000})
      FROM c, rollouts r
      WHERE p.request_id = c.request_id AND r.id = p.rollout
      RETURNING p.request_id, r.owner_url, r.owner`;
    return row;
  }

  async #request(
    requestId: string,
    owner: string,
    ownerUrl: string,
  ): Promise<PendingRequest | null | undefined> {
    const local = this.#waiting.get(requestId);
    if (local) return local.request;
    if (owner === this.o.replica) return null;
    return await this.o.fetchRequest(ownerUrl, requestId).catch(() => undefined);
  }

  next(
    waitMs: number,
    rollout?: string,
    signal?: AbortSignal,
    leaseMs: number = this.o.defaultLeaseMs,
  ): Promise<PendingRequest | null> {
    return this.#guard(() => this.#next(waitMs, rollout, signal, leaseMs));
  }

  ack(requestId: string, leaseMs?: number): Promise<Lease> {
    return this.#guard(() => this.#ack(requestId, leaseMs));
  }

  append(requestId: string, ids: number[]): Promise<void> {
    return this.#guard(() => this.#append(requestId, ids));
  }

  /** The trainer's completion, accepted at most once whichever replica it reaches. */
  complete(requestId: string, c: Completion): Promise<void> {
    return this.#guard(() => this.#complete(requestId, c));
  }

  fail(requestId: string, error: string, status?: number): Promise<void> {
    return this.#guard(() => this.#fail(requestId, error, status));
  }

  pendingCount(rollout?: string): Promise<number> {
    return this.#guard(() => this.#pendingCount(rollout));
  }

  stats(): Promise<GateStats> {
    return this.#guard(() => this.#stats());
  }

  /** A trainer's call that meets no database gets a 503 it can retry, saying so. */
  async #guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (!isConnectionError(e)) throw e;
      throw new GatewayError(
        503,
        `the gateway's database is unreachable (${
          (e as Error).message
        }); nothing was changed by this call unless a retry says it was already done; retry`,
      );
    }
  }

  /** Done by the journal, in the transaction that finishes, deletes or expires the rollout. */
  cancelRollout(): void {}

  async #pendingCount(rollout?: string): Promise<number> {
    const [row] = await this.o.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM pending WHERE state IN ${this.o.sql(OPEN)}
      ${rollout === undefined ? this.o.sql`` : this.o.sql`AND rollout = ${rollout}`}`;
    return Number(row.n);
  }

  async #stats(): Promise<GateStats> {
    const rows = await this.o.sql<{ state: string; n: string; redelivered: string }[]>`
      SELECT state, count(*) AS n, sum(greatest(epoch - 1, 0)) AS redelivered FROM pending
      GROUP BY state`;
    const n = (state: string) => Number(rows.find((r) => r.state === state)?.n ?? 0);
    return {
      queued: n("queued"),
      delivered: n("delivered"),
      leased: n("leased"),
      redelivered: rows.reduce((sum, r) => sum + Number(r.redelivered ?? 0), 0),
      withdrawn: n("withdrawn"),
    };
  }

  checkLease(leaseMs: number): number {
    if (!(Number.isFinite(leaseMs) && leaseMs > 0 && leaseMs <= this.o.maxLeaseMs)) {
      throw new GateError(
        "invalid_lease",
        `lease must be more than 0 and at most ${this.o.maxLeaseMs / 1000} seconds, got ${
          leaseMs / 1000
        }`,
      );
    }
    return leaseMs;
  }

  async #ack(requestId: string, leaseMs?: number): Promise<Lease> {
    if (leaseMs !== undefined) this.checkLease(leaseMs);
    const lease = leaseMs ?? null;
    // Without a lease named: the one the long poll asked for.
    const [row] = await this.o.sql<{ lease_ms: number; expires: string }[]>`
      UPDATE pending SET state = 'leased', lease_ms = coalesce(${lease}::int, lease_ms),
        deadline = now() + make_interval(secs => coalesce(${lease}::int, lease_ms) / 1000.0)
      WHERE request_id = ${requestId} AND state IN ${this.o.sql(OPEN)}
      RETURNING lease_ms, (extract(epoch FROM deadline) * 1000)::bigint AS expires`;
    if (!row) throw await this.#refusal(requestId);
    return { request_id: requestId, lease_ms: row.lease_ms, expires_at: Number(row.expires) };
  }

  async #append(requestId: string, ids: number[]): Promise<void> {
    const [row] = await this.o.sql`
      WITH a AS (
        UPDATE pending SET appended = appended || ${idBytes(ids)}, state = 'leased',
          deadline = now() + make_interval(secs => lease_ms / 1000.0)
        WHERE request_id = ${requestId} AND state IN ${this.o.sql(OPEN)}
          AND length(appended) / 4 + ${ids.length} <= max_tokens
        RETURNING rollout
      )
      SELECT pg_notify('rollgate_' || coalesce(r.owner, 'none'), 'resolved:' || ${requestId})
      FROM a JOIN rollouts r ON r.id = a.rollout`;
    if (!row) throw await this.#refusal(requestId, ids.length);
  }

  async #complete(requestId: string, c: Completion): Promise<void> {
    const arrays: Record<string, ArrayLike<number>> = { output_ids: c.output_ids };
    if (c.logprobs) arrays.logprobs = c.logprobs;
    const data = { request_id: requestId, finish_reason: c.finish_reason } as Record<
      string,
      unknown
    >;
    if (c.weight_version !== undefined) data.weight_version = c.weight_version;
    const output = idBytes(c.output_ids);
    const won = await this.#resolve(
      requestId,
      "completed",
      "request_completed",
      data,
      Buffer.from(packArrays(arrays)),
      this.o.sql`AND ${c.output_ids.length} <= max_tokens
        AND substr(${output}::bytea, 1, length(appended)) = appended`,
    );
    if (!won) throw await this.#refusal(requestId, 0, c.output_ids);
  }

  async #fail(requestId: string, error: string, status?: number): Promise<void> {
    const data = { request_id: requestId, error, status: status ?? null };
    const won = await this.#resolve(
      requestId,
      "failed",
      "request_failed",
      data,
      null,
      this.o
        .sql``,
    );
    if (!won) throw await this.#refusal(requestId);
  }

  /**
   * One statement: the request leaves its open state and its event is written, or neither.
   * The owner is told on its channel.
   */
  async #resolve(
    requestId: string,
    state: string,
    kind: string,
    data: Record<string, unknown>,
    arrays: Buffer | null,
    // deno-lint-ignore no-explicit-any
    condition: any,
  ): Promise<boolean> {
    const rows = await this.o.sql`
      WITH won AS (
        UPDATE pending SET state = ${state}, resolved_at = now()
        WHERE request_id = ${requestId} AND state IN ${this.o.sql(OPEN)} ${condition}
        RETURNING rollout, request_id
      ), ev AS (
        INSERT INTO events (rollout, kind, at, data, arrays, epoch, replica, ref)
        SELECT won.rollout, ${kind}, ${Date.now()}, ${JSON.stringify(data)}, ${arrays}::bytea,
          0, ${this.o.replica}, won.request_id
        FROM won RETURNING rollout
      )
      SELECT pg_notify('rollgate_' || coalesce(r.owner, 'none'), 'resolved:' || ${requestId})
      FROM ev JOIN rollouts r ON r.id = ev.rollout`;
    return rows.length > 0;
  }

  /** Why a call about a request that is not open was refused (read after the write lost). */
  async #refusal(requestId: string, adding = 0, output?: number[]): Promise<GateError> {
    const [row] = await this.o.sql<
      { state: string; reason: string | null; appended: Uint8Array; max_tokens: number }[]
    >`SELECT state, reason, appended, max_tokens FROM pending WHERE request_id = ${requestId}`;
    if (!row) return new GateError("unknown_request", `unknown request id ${requestId}`);
    if (row.state === "withdrawn") {
      return new GateError(
        "withdrawn",
        `request ${requestId} was withdrawn (${row.reason}); discard its generation`,
      );
    }
    if (!OPEN.includes(row.state)) {
      return new GateError("already_resolved", `request ${requestId} was already resolved`);
    }
    const appended = row.appended.byteLength / 4;
    const length = output ? output.length : appended + adding;
    if (length > row.max_tokens) {
      return new GateError(
        "output_too_long",
        `the output has ${length} ids; request ${requestId} allows at most ${row.max_tokens} (max_tokens, within the context left after the prompt)`,
      );
    }
    if (output) {
      return new GateError(
        "not_appended_prefix",
        `output_ids must start with the ${appended} ids appended to ${requestId}`,
      );
    }
    // Open again by now (a race with a redelivery): the caller may try again.
    return new GateError("already_resolved", `request ${requestId} changed meanwhile; retry`);
  }
}

function unreachable(e: unknown): GenerationError {
  return new GenerationError(
    "engine_failed",
    `the database is unreachable (${(e as Error).message}); retry`,
  );
}
