/**
 * The `pending` table's statements: what trainers do to a request (claim, acknowledge, append,
 * complete, fail) and what its owner does (queue it, withdraw it, read how it ended), each one
 * statement that changes a request only from the states the call is allowed from. A call that
 * changes nothing reads the request afterwards to say why (409 already resolved, 410 withdrawn,
 * 404 unknown): the decision is the write's, never the read's.
 *
 * @module
 */
import type { Sql } from "postgres";
import { Buffer } from "node:buffer";
import {
  type Completion,
  GateError,
  type GateStats,
  type Lease,
  type RowDtype,
  type RowsExpected,
  type TokenRows,
  type VersionRun,
} from "../generation/mod.ts";
import { packArrays } from "../journal/mod.ts";

/** The states a request can still be taken, leased, completed or failed in. */
export const OPEN = ["queued", "delivered", "leased"];

/** Ids as the table keeps them: int32, little-endian. */
export function idBytes(ids: readonly number[]): Buffer {
  const b = Buffer.alloc(ids.length * 4);
  for (let i = 0; i < ids.length; i++) b.writeInt32LE(ids[i], i * 4);
  return b;
}

export function idsOf(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number>(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}

/** How a request ended, as its owner reads it. */
export interface Outcome {
  state: string;
  reason: string | null;
  appended: Uint8Array;
  /** Weight versions of the appended chunks, each from where it starts. */
  versions: VersionRun[];
  data: string | null;
  arrays: Uint8Array | null;
  /** The completion's `routed_experts`, when it had them. */
  routed_dtype: RowDtype | null;
  routed_shape: number[] | null;
  routed_experts: Uint8Array | null;
}

/** What the owner queues: the request and what its completion will be checked against. */
export interface QueuedRequest {
  request_id: string;
  rollout_id: string;
  turn_id: string;
  maxTokens: number;
  rows: RowsExpected;
}

export class RequestTable {
  constructor(
    readonly sql: Sql,
    readonly replica: string,
    readonly ackTimeoutMs: number,
    readonly defaultLeaseMs: number,
  ) {}

  /** Queues a request; false when it was there already (a restored turn's). */
  async insert(r: QueuedRequest) {
    const like = r.rows.like ? JSON.stringify(r.rows.like) : null;
    const [row] = await this.sql<{ inserted: boolean }[]>`
      WITH ins AS (
        INSERT INTO pending (request_id, rollout, turn_id, state, lease_ms, max_tokens,
          prompt_len, rows_from, rows_like)
        VALUES (${r.request_id}, ${r.rollout_id}, ${r.turn_id}, 'queued',
          ${this.defaultLeaseMs}, ${r.maxTokens}, ${r.rows.promptLength}, ${r.rows.from},
          ${like}::text::jsonb)
        ON CONFLICT (request_id) DO NOTHING
        RETURNING request_id
      )
      SELECT count(*) > 0 AS inserted, pg_notify('rollgate_queue', '') FROM ins`;
    return row.inserted;
  }

  /** Withdraws an open request; false when it was resolved first. */
  async withdraw(requestId: string, reason: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE pending SET state = 'withdrawn', reason = ${reason}, resolved_at = now()
      WHERE request_id = ${requestId} AND state IN ${this.sql(OPEN)}
      RETURNING request_id`;
    return rows.length > 0;
  }

  /** The rollout of an open request whose rollout this replica owns, or undefined. */
  async openOwnRequest(requestId: string): Promise<string | undefined> {
    const [row] = await this.sql<{ rollout: string }[]>`
      SELECT p.rollout FROM pending p JOIN rollouts r ON r.id = p.rollout
      WHERE p.request_id = ${requestId} AND p.state IN ${this.sql(OPEN)}
        AND r.owner = ${this.replica}`;
    return row?.rollout;
  }

  /** A claimed request its owner could not hand over is offered again a second later. */
  async release(requestId: string): Promise<void> {
    await this.sql`
      UPDATE pending SET deadline = now() + interval '1 second'
      WHERE request_id = ${requestId} AND state = 'delivered'`;
  }

  /**
   * The request's state, appended ids and resolution event, if any. Its `routed_experts` are
   * read from `token_rows` once the owner stored them there (a restored turn reads them again).
   */
  async outcome(requestId: string): Promise<Outcome | undefined> {
    const [row] = await this.sql<Outcome[]>`
      SELECT p.state, p.reason, p.appended, p.versions, e.data, e.arrays, p.routed_dtype,
        p.routed_shape, coalesce(p.routed_experts, (SELECT t.data FROM token_rows t
          WHERE t.turn = p.turn_id AND t.field = 'routed_experts')) AS routed_experts
      FROM pending p
      LEFT JOIN events e ON e.rollout = p.rollout AND e.ref = p.request_id
        AND e.kind IN ('request_completed', 'request_failed')
      WHERE p.request_id = ${requestId}`;
    return row;
  }

  /** Of `ids`, those resolved or with appended ids (an owner's poll). */
  async changed(ids: string[]): Promise<string[]> {
    const rows = await this.sql<{ request_id: string }[]>`
      SELECT request_id FROM pending WHERE request_id = ANY(${ids})
        AND (state NOT IN ${this.sql(OPEN)} OR length(appended) > 0)`;
    return rows.map((r) => r.request_id);
  }

  async claim(rollout: string | undefined, leaseMs: number) {
    const [row] = await this.sql<{ request_id: string; owner_url: string; owner: string }[]>`
      WITH c AS (
        SELECT p.request_id FROM pending p JOIN rollouts r ON r.id = p.rollout
        WHERE (p.state = 'queued' OR (p.state IN ('delivered', 'leased') AND p.deadline < now()))
          AND r.lease_until > now()
          ${rollout === undefined ? this.sql`` : this.sql`AND p.rollout = ${rollout}`}
        ORDER BY p.state = 'queued', p.seq
        LIMIT 1
        FOR UPDATE OF p SKIP LOCKED
      )
      UPDATE pending p SET state = 'delivered', epoch = p.epoch + 1, lease_ms = ${leaseMs},
        deadline = now() + make_interval(secs => ${this.ackTimeoutMs / 1000})
      FROM c, rollouts r
      WHERE p.request_id = c.request_id AND r.id = p.rollout
      RETURNING p.request_id, r.owner_url, r.owner`;
    return row;
  }

  async pendingCount(rollout?: string): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`
      SELECT count(*) AS n FROM pending WHERE state IN ${this.sql(OPEN)}
      ${rollout === undefined ? this.sql`` : this.sql`AND rollout = ${rollout}`}`;
    return Number(row.n);
  }

  async stats(): Promise<GateStats> {
    const rows = await this.sql<{ state: string; n: string; redelivered: string }[]>`
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

  async ack(requestId: string, leaseMs?: number): Promise<Lease> {
    const lease = leaseMs ?? null;
    // Without a lease named: the one the long poll asked for.
    const [row] = await this.sql<{ lease_ms: number; expires: string }[]>`
      UPDATE pending SET state = 'leased', lease_ms = coalesce(${lease}::int, lease_ms),
        deadline = now() + make_interval(secs => coalesce(${lease}::int, lease_ms) / 1000.0)
      WHERE request_id = ${requestId} AND state IN ${this.sql(OPEN)}
      RETURNING lease_ms, (extract(epoch FROM deadline) * 1000)::bigint AS expires`;
    if (!row) throw await this.refusal(requestId);
    return { request_id: requestId, lease_ms: row.lease_ms, expires_at: Number(row.expires) };
  }

  /** Appends ids; a `version` unlike the previous chunk's starts a run where they start. */
  async append(requestId: string, ids: number[], version?: string | number): Promise<void> {
    // jsonb values go as text (a parameter typed jsonb would be JSON-encoded once more).
    const v = version === undefined ? null : JSON.stringify(version);
    const [row] = await this.sql`
      WITH a AS (
        UPDATE pending SET appended = appended || ${idBytes(ids)}, state = 'leased',
          versions = CASE WHEN ${v}::text::jsonb IS NULL OR versions -> -1 -> 1 = ${v}::text::jsonb
            THEN versions
            ELSE versions || jsonb_build_array(jsonb_build_array(length(appended) / 4, ${v}::text::jsonb))
          END,
          deadline = now() + make_interval(secs => lease_ms / 1000.0)
        WHERE request_id = ${requestId} AND state IN ${this.sql(OPEN)}
          AND length(appended) / 4 + ${ids.length} <= max_tokens
        RETURNING rollout
      )
      SELECT pg_notify('rollgate_' || coalesce(r.owner, 'none'), 'resolved:' || ${requestId})
      FROM a JOIN rollouts r ON r.id = a.rollout`;
    if (!row) throw await this.refusal(requestId, ids.length);
  }

  /**
   * What a completion's `routed_experts` are checked against, read where the completion would
   * win (open, not too long, starting with the appended ids); otherwise the refusal it gets.
   */
  async rowsExpected(requestId: string, output: number[]): Promise<RowsExpected> {
    const [row] = await this.sql<
      { prompt_len: number | null; rows_from: number; rows_like: RowsExpected["like"] | null }[]
    >`
      SELECT prompt_len, rows_from, rows_like FROM pending
      WHERE request_id = ${requestId} AND state IN ${this.sql(OPEN)}
        AND ${output.length} <= max_tokens
        AND substr(${idBytes(output)}::bytea, 1, length(appended)) = appended`;
    if (!row) throw await this.refusal(requestId, 0, output);
    if (row.prompt_len === null) {
      throw new GateError(
        "invalid_routed_experts",
        `request ${requestId} was queued by an older replica that keeps no routed_experts; complete it without them`,
      );
    }
    return { promptLength: row.prompt_len, from: row.rows_from, like: row.rows_like ?? undefined };
  }

  /** Completes a request, with its checked `routed_experts` if any (carried to its owner). */
  async complete(
    requestId: string,
    c: Omit<Completion, "routed_experts">,
    rows?: TokenRows,
  ): Promise<void> {
    const arrays: Record<string, ArrayLike<number>> = { output_ids: c.output_ids };
    if (c.logprobs) arrays.logprobs = c.logprobs;
    const data = { request_id: requestId, finish_reason: c.finish_reason } as Record<
      string,
      unknown
    >;
    const kept = c.sampling_mask;
    if (kept) {
      arrays.sampling_mask = new Int32Array(
        kept.bytes.buffer,
        kept.bytes.byteOffset,
        kept.bytes.byteLength / 4,
      );
      data.sampling_mask_width = kept.shape[2];
    }
    if (c.weight_version !== undefined) data.weight_version = c.weight_version;
    if (c.logprobs_mode !== undefined) data.logprobs_mode = c.logprobs_mode;
    const output = idBytes(c.output_ids);
    const bytes = rows?.bytes;
    const carried = rows
      ? this.sql`, routed_dtype = ${rows.dtype}, routed_shape = ${
        JSON.stringify(rows.shape)
      }::text::jsonb,
        routed_experts = ${Buffer.from(bytes!.buffer, bytes!.byteOffset, bytes!.byteLength)}::bytea`
      : this.sql``;
    const won = await this.resolve(
      requestId,
      "completed",
      "request_completed",
      data,
      Buffer.from(packArrays(arrays)),
      this.sql`AND ${c.output_ids.length} <= max_tokens
        AND substr(${output}::bytea, 1, length(appended)) = appended`,
      carried,
    );
    if (!won) throw await this.refusal(requestId, 0, c.output_ids);
  }

  async fail(requestId: string, error: string, status?: number): Promise<void> {
    const data = { request_id: requestId, error, status: status ?? null };
    const won = await this.resolve(
      requestId,
      "failed",
      "request_failed",
      data,
      null,
      this.sql``,
      this.sql``,
    );
    if (!won) throw await this.refusal(requestId);
  }

  /**
   * One statement: the request leaves its open state and its event is written, or neither.
   * The owner is told on its channel.
   */
  async resolve(
    requestId: string,
    state: string,
    kind: string,
    data: Record<string, unknown>,
    arrays: Buffer | null,
    // deno-lint-ignore no-explicit-any
    condition: any,
    // deno-lint-ignore no-explicit-any
    set: any,
  ): Promise<boolean> {
    const rows = await this.sql`
      WITH won AS (
        UPDATE pending SET state = ${state}, resolved_at = now() ${set}
        WHERE request_id = ${requestId} AND state IN ${this.sql(OPEN)} ${condition}
        RETURNING rollout, request_id
      ), ev AS (
        INSERT INTO events (rollout, kind, at, data, arrays, epoch, replica, ref)
        SELECT won.rollout, ${kind}, ${Date.now()}, ${JSON.stringify(data)}, ${arrays}::bytea,
          0, ${this.replica}, won.request_id
        FROM won RETURNING rollout
      )
      SELECT pg_notify('rollgate_' || coalesce(r.owner, 'none'), 'resolved:' || ${requestId})
      FROM ev JOIN rollouts r ON r.id = ev.rollout`;
    return rows.length > 0;
  }

  /** Why a call about a request that is not open was refused (read after the write lost). */
  async refusal(requestId: string, adding = 0, output?: number[]): Promise<GateError> {
    const [row] = await this.sql<
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
