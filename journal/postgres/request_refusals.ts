/**
 * Why a trainer's call about a request was refused, read after the statement that would have
 * changed it changed nothing (the decision is the write's, never this read's): 404 unknown, 410
 * withdrawn, 409 already resolved, 400 too long, 409 not the appended prefix.
 *
 * @module
 */
import type { Sql } from "postgres";
import { GateError } from "../../generation/mod.ts";
import { isOpen } from "./request_states.ts";

export async function refusal(
  sql: Sql,
  requestId: string,
  adding = 0,
  output?: number[],
): Promise<GateError> {
  const [row] = await sql<
    { state: string; reason: string | null; appended: Uint8Array; max_tokens: number }[]
  >`SELECT state, reason, appended, max_tokens FROM pending WHERE request_id = ${requestId}`;
  if (!row) return new GateError("unknown_request", `unknown request id ${requestId}`);
  if (row.state === "withdrawn") {
    return new GateError(
      "withdrawn",
      `request ${requestId} was withdrawn (${row.reason}); discard its generation`,
    );
  }
  if (!isOpen(row.state)) {
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
