/**
 * A turn's journal events, built where the turn changes and read back by `restore.ts`:
 *
 * - `turn_registered`: the request, as what is new in it: the messages below the node its history
 *   matched (numbered by the tree, see `MessageNode.id`) and the rest of the request; the tool
 *   list as a shared value (stored once however many turns repeat it);
 * - `turn_planned`: its prompt (bridge and delta ids, as the turn stores them), the sampling and the
 *   request id the backend got;
 * - `turn_recorded`: the sampled ids, logprobs and the parsed answer;
 * - `turn_failed`, `turn_retried`.
 *
 * No event holds the whole history or the whole prompt: each holds what the turn added.
 *
 * @module
 */
import type { CanonicalRequest, TurnAnswer } from "../canonical/mod.ts";
import type { SamplingRequest } from "../generation/mod.ts";
import type { JournalEvent } from "./journal.ts";
import type { Turn } from "./turn.ts";
import type { Mount } from "./turn_tree.ts";

/** The request without its history and tools (which `turn_registered` stores apart). */
export type RequestRest = Omit<CanonicalRequest, "messages" | "tools">;

export interface TurnRegistered {
  index: number;
  id: string;
  /** The tree node the history matched down to (0: none, a root). */
  prefix: number;
  /** The messages after it. */
  messages: CanonicalRequest["messages"];
  request: RequestRest;
  toolCallIdPrefix: string;
  received: number;
  blackBox?: true;
}

export function turnRegistered(
  turn: Turn,
  mount: Mount,
  req: CanonicalRequest,
  toolCallIdPrefix: string,
  blackBox: boolean,
): JournalEvent {
  const { messages, tools, ...request } = req;
  const data: TurnRegistered = {
    index: turn.index,
    id: turn.id,
    prefix: mount.node.id,
    messages: messages.slice(mount.matched),
    request,
    toolCallIdPrefix,
    received: turn.timings.received,
  };
  if (blackBox) data.blackBox = true;
  return { rollout: turn.rolloutId, kind: "turn_registered", data: { ...data }, shared: { tools } };
}

/** What `turn_planned` holds beyond the ids. */
export interface TurnPlanned {
  index: number;
  requestId: string;
  sampling: SamplingRequest;
  maxTokens: number;
  header: NonNullable<Turn["header"]>;
  rendered: number;
  /** The prompt plan's other fields (prompt length, rendered messages, tool spans, …). */
  plan: Record<string, unknown>;
}

/** Turn fields a prompt plan sets that are not ids. */
const NOT_PLAN = new Set(["bridgeIds", "deltaIds"]);

export function turnPlanned(
  turn: Turn,
  plan: object,
  requestId: string,
  sampling: SamplingRequest,
): JournalEvent {
  const data: TurnPlanned = {
    index: turn.index,
    requestId,
    sampling,
    maxTokens: turn.maxTokens,
    header: turn.header!,
    rendered: turn.timings.rendered!,
    plan: Object.fromEntries(Object.entries(plan).filter(([k]) => !NOT_PLAN.has(k))),
  };
  return {
    rollout: turn.rolloutId,
    kind: "turn_planned",
    data: { ...data },
    arrays: { bridge_ids: turn.bridgeIds, delta_ids: turn.deltaIds },
  };
}

export interface TurnRecorded {
  index: number;
  answer: TurnAnswer;
  finishReason?: Turn["finishReason"];
  weightVersion?: Turn["weightVersion"];
  /** Sampling facts, per-chunk versions, where the turn's token rows lie (the rows: apart). */
  facts?: Turn["facts"];
  malformedToolCalls: number;
  drift: Turn["drift"];
  promptLength: number;
  renderedMessages: number;
  maxTokens: number;
  rendered?: number;
  completed: number;
}

export function turnRecorded(turn: Turn): JournalEvent {
  const data: TurnRecorded = {
    index: turn.index,
    answer: turn.answer!,
    finishReason: turn.finishReason,
    weightVersion: turn.weightVersion,
    facts: turn.facts,
    malformedToolCalls: turn.malformedToolCalls,
    drift: turn.drift,
    promptLength: turn.promptLength,
    renderedMessages: turn.renderedMessages,
    maxTokens: turn.maxTokens,
    rendered: turn.timings.rendered,
    completed: turn.timings.completed!,
  };
  const arrays: Record<string, ArrayLike<number>> = { output_ids: turn.outputIds };
  if (turn.logprobs) arrays.logprobs = turn.logprobs;
  return { rollout: turn.rolloutId, kind: "turn_recorded", data: { ...data }, arrays };
}

export function turnFailed(turn: Turn): JournalEvent {
  return {
    rollout: turn.rolloutId,
    kind: "turn_failed",
    data: { index: turn.index, error: turn.error ?? "", completed: turn.timings.completed },
  };
}

export function turnRetried(turn: Turn): JournalEvent {
  return { rollout: turn.rolloutId, kind: "turn_retried", data: { index: turn.index } };
}
