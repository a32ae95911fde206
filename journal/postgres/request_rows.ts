/**
 * The `pending` table's statements: what trainers do to a request (acknowledge, append, complete,
 * fail; their long polls claim it in `claim_rows.ts`) and what its owner does (queue it, withdraw
 * it, read how it ended), each one
 * statement that changes a request only from the states the call is allowed from. A call that
 * changes nothing reads the request afterwards to say why (409 already resolved, 410 withdrawn,
 * 404 unknown): the decision is the write's, never the read's. A completion sent again with the
 * same output (its first answer was lost with a replica) is told it was accepted before.
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
} from "../../generation/mod.ts";
import { CHANNEL_PREFIX, QUEUE_CHANNEL } from "./channels.ts";
import { idBytes } from "./id_bytes.ts";
import { checkRow, rowSum } from "../row_checksum.ts";
import { OPEN_STATES, type RequestState } from "./request_states.ts";
import { refusal } from "./request_refusals.ts";
import {
  completionOf,
  readRequestEvent,
  REQUEST_EVENT_KINDS,
  requestCompleted,
  type RequestEvent,
  requestFailed,
} from "./request_events.ts";

const OPEN = OPEN_STATES as unknown as string[];
const REQUEST_KINDS = REQUEST_EVENT_KINDS as unknown as string[];

// deno-lint-ignore no-explicit-any
type Tx = any;

/** How a request ended, as its owner reads it. */
export interface Outcome {
  state: RequestState;
  reason: string | null;
  appended: Uint8Array;
  /** Weight versions of the appended chunks, each from where it starts. */
  versions: VersionRun[];
  /** The trainer's answer, once there is one. */
  event: RequestEvent | undefined;
  /** The completion's `routed_experts`, when it had them. */
  routed_dtype: RowDtype | null;
  routed_shape: number[] | null;
  routed_experts: Uint8Array | null;
}

/** What a request held when a trainer's answer resolved it. */
export interface Resolved {
  /** Ids appended before the completion. */
  appended: number;
  /** Their weight versions, each from where it starts. */
  versions: VersionRun[];
}

/** What the owner queues: the request and what its completion will be checked against. */
export interface QueuedRequest {
  request_id: string;
  rollout_id: string;
  turn_id: string;
  maxTokens: number;
  rows: RowsExpected;
}

export class RequestRows {
  constructor(
    readonly sql: Sql,
    readonly replica: string,
    readonly ackTimeoutMs: number,
    readonly defaultLeaseMs: number,
  ) {}

  /**
   * Queues a request; false when it was there already (a restored turn's). `deliveredTo`: a
   * trainer's long poll on this replica takes it at once (it is inserted delivered, or leased, as
   * a claim would leave it: one statement instead of two, and nobody else is woken); `expires`:
   * when a lease so granted runs out (ms since the epoch).
   */
  async insert(
    r: QueuedRequest,
    deliveredTo?: { leaseMs: number; leased?: boolean },
  ): Promise<{ inserted: boolean; expires?: number }> {
    const like = r.rows.like ? JSON.stringify(r.rows.like) : null;
    const to = deliveredTo !== undefined;
    const leased = deliveredTo?.leased === true;
    const leaseMs = deliveredTo?.leaseMs ?? this.defaultLeaseMs;
    const [row] = await this.sql<{ inserted: boolean; expires: string | null }[]>`
      WITH ins AS (
        INSERT INTO pending (request_id, rollout, turn_id, state, epoch, lease_ms, deadline,
          delivered_by, max_tokens, prompt_len, rows_from, rows_like)
        VALUES (${r.request_id}, ${r.rollout_id}, ${r.turn_id},
          ${leased ? "leased" : to ? "delivered" : "queued"}, ${to ? 1 : 0}, ${leaseMs},
          CASE WHEN ${to} THEN now() + make_interval(secs => ${
      (leased ? leaseMs : this.ackTimeoutMs) / 1000
    }) END,
          ${to ? this.replica : null}, ${r.maxTokens}, ${r.rows.promptLength}, ${r.rows.from},
          ${like}::text::jsonb)
        ON CONFLICT (request_id) DO NOTHING
        RETURNING request_id, deadline
      )
      SELECT count(*) > 0 AS inserted,
        max((extract(epoch FROM deadline) * 1000)::bigint) AS expires,
        CASE WHEN NOT ${to} AND count(*) > 0 THEN pg_notify(${QUEUE_CHANNEL}, '') END
      FROM ins`;
    if (!leased || !row.inserted) return { inserted: row.inserted };
    return { inserted: true, expires: Number(row.expires) };
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

  /**
   * Requests `replica` handed to trainers that no trainer acknowledged: offered again at once
   * (that replica is gone; its answers to the long polls likely died with it), not after the
   * acknowledgement timeout. Returns how many.
   */
  async redeliverFrom(replica: string): Promise<number> {
    const rows = await this.sql`
      WITH again AS (
        UPDATE pending SET state = 'queued', deadline = NULL, delivered_by = NULL
        WHERE delivered_by = ${replica} AND state = 'delivered'
        RETURNING request_id
      )
      SELECT request_id, pg_notify(${QUEUE_CHANNEL}, '') FROM again`;
    return rows.length;
  }

  /**
   * The request's state, appended ids and resolution event, if any. Its `routed_experts` are
   * read from `token_rows` once the owner stored them there (a restored turn reads them again).
   */
  async outcome(requestId: string): Promise<Outcome | undefined> {
    const [row] = await this.sql<
      (Omit<Outcome, "event"> & {
        kind: string | null;
        data: string | null;
        arrays: Uint8Array | null;
        sum: string | null;
      })[]
    >`
      SELECT p.state, p.reason, p.appended, p.versions, e.kind, e.data, e.arrays, e.sum,
        p.routed_dtype,
        p.routed_shape, coalesce(p.routed_experts, (SELECT t.data FROM token_rows t
          WHERE t.turn = p.turn_id AND t.field = 'routed_experts')) AS routed_experts
      FROM pending p
      LEFT JOIN events e ON e.rollout = p.rollout AND e.ref = p.request_id
        AND e.kind IN ${this.sql(REQUEST_KINDS)}
      WHERE p.request_id = ${requestId}`;
    if (!row) return undefined;
    const { kind, data, arrays, sum, ...rest } = row;
    if (!kind || !data) return { ...rest, event: undefined };
    checkRow(data, arrays, sum === null ? null : Number(sum));
    return { ...rest, event: readRequestEvent(kind, data, arrays) };
  }

  /** Of `ids`, those resolved or with appended ids (an owner's poll). */
  async changed(ids: string[]): Promise<string[]> {
    const rows = await this.sql<{ request_id: string }[]>`
      SELECT request_id FROM pending WHERE request_id = ANY(${ids})
        AND (state NOT IN ${this.sql(OPEN)} OR length(appended) > 0)`;
    return rows.map((r) => r.request_id);
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
    if (!row) throw await refusal(this.sql, requestId);
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
      SELECT pg_notify(${CHANNEL_PREFIX} || coalesce(r.owner, 'none'), 'resolved:' || ${requestId})
      FROM a JOIN rollouts r ON r.id = a.rollout`;
    if (!row) throw await refusal(this.sql, requestId, ids.length);
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
    if (!row) throw await refusal(this.sql, requestId, 0, output);
    if (row.prompt_len === null) {
      throw new GateError(
        "invalid_routed_experts",
        `request ${requestId} was queued by an older replica that keeps no routed_experts; complete it without them`,
      );
    }
    return { promptLength: row.prompt_len, from: row.rows_from, like: row.rows_like ?? undefined };
  }

  /**
   * Completes a request, with its checked `routed_experts` if any (carried to its owner); what
   * the request held when it was completed, or `resent` when it was completed before with the
   * same output (this is that completion again, sent after its answer was lost). `ownWaiter`:
   * this replica's turn waits for it and is settled by the caller (its owner is not told).
   */
  async complete(
    requestId: string,
    c: Omit<Completion, "routed_experts">,
    rows?: TokenRows,
    ownWaiter = false,
  ): Promise<Resolved | "resent"> {
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
      requestCompleted(requestId, c),
      this.sql`AND ${c.output_ids.length} <= max_tokens
        AND substr(${output}::bytea, 1, length(appended)) = appended`,
      carried,
      ownWaiter,
    );
    if (won) return won;
    if (await this.completedWith(requestId, c.output_ids)) return "resent";
    throw await refusal(this.sql, requestId, 0, c.output_ids);
  }

  /** Whether the request was completed with exactly `output` (a completion sent again). */
  async completedWith(requestId: string, output: readonly number[]): Promise<boolean> {
    const outcome = await this.outcome(requestId);
    if (outcome?.state !== "completed" || outcome.event?.kind !== "request_completed") {
      return false;
    }
    const stored = completionOf(outcome.event).output_ids;
    return stored.length === output.length && stored.every((id, i) => id === output[i]);
  }

  async fail(requestId: string, error: string, status?: number): Promise<void> {
    const won = await this.resolve(
      requestId,
      "failed",
      requestFailed(requestId, error, status),
      this.sql``,
      this.sql``,
    );
    if (!won) throw await refusal(this.sql, requestId);
  }

  /**
   * One statement: the request leaves its open state and its event is written, or neither.
   * The owner is told on its channel.
   */
  async resolve(
    requestId: string,
    state: "completed" | "failed",
    event: RequestEvent,
    // deno-lint-ignore no-explicit-any
    condition: any,
    // deno-lint-ignore no-explicit-any
    set: any,
    ownWaiter = false,
  ): Promise<Resolved | undefined> {
    const arrays = event.arrays ? Buffer.from(event.arrays) : null;
    const data = JSON.stringify(event.data);
    // The owner is told on its channel, unless it is this replica and settles its turn itself.
    const [row] = await this.sql<{ appended: number; versions: VersionRun[] }[]>`
      WITH won AS (
        UPDATE pending SET state = ${state}, resolved_at = now() ${set}
        WHERE request_id = ${requestId} AND state IN ${this.sql(OPEN)} ${condition}
        RETURNING rollout, request_id, length(appended) / 4 AS appended, versions
      ), ev AS (
        INSERT INTO events (rollout, kind, at, data, arrays, epoch, replica, ref, sum)
        SELECT won.rollout, ${event.kind}, ${Date.now()}, ${data}, ${arrays}::bytea, 0,
          ${this.replica}, won.request_id, ${rowSum(data, event.arrays)}
        FROM won RETURNING rollout
      )
      SELECT won.appended, won.versions,
        CASE WHEN NOT ${ownWaiter} OR r.owner IS DISTINCT FROM ${this.replica}
          THEN pg_notify(${CHANNEL_PREFIX} || coalesce(r.owner, 'none'), 'resolved:' || ${requestId})
        END
      FROM won, ev JOIN rollouts r ON r.id = ev.rollout`;
    return row ? { appended: Number(row.appended), versions: row.versions } : undefined;
  }
}

/** Withdraws a rollout's open requests (it finished, was deleted or expired); their owner is told. */
export async function withdrawPending(tx: Tx, rollout: string, reason: string): Promise<void> {
  await tx`
    WITH gone AS (
      UPDATE pending SET state = 'withdrawn', reason = ${reason}, resolved_at = now()
      WHERE rollout = ${rollout} AND state IN ${tx(OPEN)}
      RETURNING request_id, rollout
    )
    SELECT pg_notify(${CHANNEL_PREFIX} || coalesce(r.owner, 'none'), 'resolved:' || g.request_id)
    FROM gone g JOIN rollouts r ON r.id = g.rollout`;
}
