/**
 * The one way a turn's recorded state changes, for every backend and for a restore alike:
 * registered (in the tree, on its chain), its output placed (with what it was sampled under),
 * recorded (its answer in the tree, its waiters answered) or failed. Each change is journaled where it happens, and waiters are answered only once it is
 * durable.
 *
 * @module
 */
import type { AssistantMessage, CanonicalRequest, TurnAnswer } from "../../canonical/mod.ts";
import type { Completion, SamplingRequest } from "../../generation/mod.ts";
import { TOKEN_ROW_FIELDS } from "../../generation/mod.ts";
import { NativeMemoryTrim } from "../../model/mod.ts";
import type { Rollout } from "../rollout.ts";
import { placeOutput, type Turn } from "../turn.ts";
import { turnFacts } from "../turn_facts.ts";
import type { MessageNode, Mount } from "../tree/mod.ts";
import { openAgentCalls, registerTurn } from "./assign_chain.ts";
import { type JournalWriter, turnFailed, turnRecorded, turnRegistered } from "../journaling/mod.ts";
import { TurnError, type TurnErrorKind } from "../turn_error.ts";

/** What a hosted API answered, read back into the canonical message (black-box turns). */
export interface BlackBoxAnswer {
  message: AssistantMessage;
  usage: { input_tokens: number; output_tokens: number };
}

/** A registered turn and how to settle it. */
export interface OpenTurn {
  rollout: Rollout;
  turn: Turn;
  promptNode: MessageNode;
  writer: JournalWriter;
  settle: { resolve(a: TurnAnswer): void; reject(e: unknown): void };
  /** `performance.now()` when the turn was registered. */
  startedAt: number;
  /** Milliseconds spent waiting for the backend (a pause hold included) so far. */
  backendMs: number;
}

export interface OpenOptions {
  /** Last part of the turn id. */
  idSuffix: string;
  /** Prefix of tool-call ids minted for the answer (the request's protocol's). */
  toolCallIdPrefix: string;
  blackBox?: boolean;
}

/** Registers a pending turn for a request mounted at `mount` (synchronously). */
export function openTurn(
  rollout: Rollout,
  req: CanonicalRequest,
  mount: Mount,
  writer: JournalWriter,
  o: OpenOptions,
): OpenTurn {
  let settle!: OpenTurn["settle"];
  const result = new Promise<TurnAnswer>((resolve, reject) => settle = { resolve, reject });
  result.catch(() => {}); // nobody may be listening any more (client gone)
  const { turn, promptNode } = registerTurn(rollout, req, mount, result, o.idSuffix);
  if (o.blackBox) turn.blackBox = true;
  writer.record(turnRegistered(turn, mount, req, o.toolCallIdPrefix, o.blackBox ?? false));
  return { rollout, turn, promptNode, writer, settle, startedAt: performance.now(), backendMs: 0 };
}

/**
 * Places a backend's output on the turn with what it was sampled under (`rowsFrom`: where the
 * chain's earlier token rows end; `sentVersion`: the weight version in force when the request
 * went out). Its token rows go to the journal now: the turn keeps where they lie, not the bytes.
 */
export function recordOutput(
  open: OpenTurn,
  completion: Completion,
  sampling: SamplingRequest,
  rowsFrom: number,
  sentVersion?: string | number,
): void {
  const { rollout, turn } = open;
  placeOutput(turn, completion.output_ids);
  turn.logprobs = completion.logprobs ? Float64Array.from(completion.logprobs) : null;
  turn.finishReason = completion.finish_reason;
  // The version its first id was sampled under: a turn that waited across an update, or straddled
  // one, is as old as its oldest token (every version is kept in `facts.versions`). The engine's
  // or trainer's own stamp first, then the version in force when it was sent, then the one the
  // completion reports (`facts.completionVersion`).
  turn.weightVersion = completion.weight_versions?.[0]?.[1] ?? completion.dispatch_version ??
    sentVersion ?? completion.weight_version;
  turn.facts = turnFacts(completion, sampling, rowsFrom, turn.ids.outputStart);
  for (const field of TOKEN_ROW_FIELDS) {
    const rows = completion[field];
    if (!rows) continue;
    open.writer.putRows(rollout.id, turn.id, field, rows);
    // Its request body, text and decoded copies are ~3× the rows, freed into glibc's arenas.
    void NativeMemoryTrim.shared().afterLargeBuffers(3 * rows.bytes.length);
  }
}

/**
 * Records a turn's answer: it hangs in the message tree, its sub-agent calls open, and its
 * waiters get the answer once the journal has it.
 */
export function record(open: OpenTurn, answer: TurnAnswer): void {
  const { rollout, turn, promptNode } = open;
  // A turn failed meanwhile (abandoned at shutdown) stays failed.
  if (turn.status !== "pending") return;
  turn.message = answer.message;
  turn.answer = answer;
  turn.status = "done";
  turn.timings.completed ??= Date.now();
  rollout.touch();
  rollout.tree.recordAnswer(promptNode, turn);
  openAgentCalls(rollout, turn, answer.message);
  turn.live?.close();
  open.writer.record(turnRecorded(turn));
  open.writer.durable().then(() => open.settle.resolve(answer), open.settle.reject);
}

/** Fails a turn; `error` is also what its waiters get. */
export function fail(open: OpenTurn, error: unknown): void {
  const { turn } = open;
  if (turn.status !== "pending") return;
  turn.live?.close();
  turn.status = "failed";
  turn.error = (error as Error)?.message ?? String(error);
  turn.timings.completed ??= Date.now();
  open.writer.record(turnFailed(turn));
  open.writer.durable().then(() => open.settle.reject(error), open.settle.reject);
}

/** Fails a turn that cannot be generated, with the error its request gets too. */
export function refuse(open: OpenTurn, kind: TurnErrorKind, message: string): TurnError {
  const error = new TurnError(kind, message);
  fail(open, error);
  return error;
}
