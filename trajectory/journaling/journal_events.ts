/**
 * Every journal event, one type per kind, and the one place each is built. The façade
 * (`rollout_actions.ts`) and the turn code build them where a change happens; `restore.ts` switches
 * on `kind` to replay them. What goes to the store (`rollout`, `kind`, `data`, `arrays`, `shared`)
 * is the format journals on disk already hold: a field added here must be optional on replay.
 *
 * - `rollout_created`: the rollout's spec, id, token and creation time;
 * - `turn_registered`: the request, as what is new in it: the messages below the node its history
 *   matched (numbered by the tree, see `MessageNode.id`) and the rest of the request; the tool
 *   list as a shared value (stored once however many turns repeat it);
 * - `turn_planned`: its prompt (bridge and delta ids, as the turn stores them), the sampling and the
 *   request id the backend got, and where an engine's render broke the chain (`rerender`);
 * - `turn_recorded`: the sampled ids, logprobs, the parsed answer and the turn's facts (sampling
 *   facts, per-chunk versions, where its token rows lie: the rows themselves are kept apart);
 * - `turn_failed`, `turn_retried`;
 * - `turn_reward`: a reward a trainer posted for one recorded turn (before or after finish);
 * - `teacher_scored`: a teacher's logprob of each of a turn's sampled ids (in `arrays`);
 *   `teacher_failed`: why its teacher gave none (a later scoring of the chain may still);
 * - `host_call`, `agent_exit`: what the agent told the host;
 * - `rollout_finished`: the reward and the reference version (the samples go with it, see
 *   `Journal.finish`).
 *
 * No event holds the whole history or the whole prompt: each holds what the turn added.
 *
 * @module
 */
import type { CanonicalRequest, TurnAnswer } from "../../canonical/mod.ts";
import type { SamplingRequest } from "../../generation/mod.ts";
import type { AgentExit, HostCall, Rollout } from "../rollout.ts";
import type { CreateRollout } from "../rollout_store.ts";
import type { Turn } from "../turn.ts";
import type { Mount } from "../tree/mod.ts";
import type { Rerender } from "../chains/mod.ts";

/** Number arrays an event carries in binary: token ids, logprobs, masks. */
export type EventArrays = Readonly<Record<string, ArrayLike<number>>>;

/** One change of kind `K` to one rollout, as a store keeps it. */
interface Event<K extends string, D> {
  rollout: string;
  kind: K;
  /** Plain JSON (no large number arrays: those go in `arrays`). */
  data: D;
  /** Large number arrays, stored compactly (int32 for ids, float64 for everything else). */
  arrays?: EventArrays;
  /**
   * Values many events repeat (a turn's tool list): stored once by content, given back in place
   * on replay.
   */
  shared?: Record<string, unknown>;
}

/** What `rollout_created` holds: the spec with the id, token and time it got. */
export type RolloutCreated = CreateRollout & { id: string; token: string; createdAt: number };

/**
 * The request without its history and tools (which `turn_registered` stores apart) and without
 * its images' bytes (in the image store; the messages name them by hash).
 */
export type RequestRest = Omit<CanonicalRequest, "messages" | "tools" | "images">;

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
  /** The engine's render did not extend the base's ids: the turn starts a `rerender` chain. */
  rerender?: Rerender;
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

export interface TurnFailed {
  index: number;
  error: string;
  completed?: number;
}

export interface TurnReward {
  index: number;
  reward: number;
}

export interface TeacherScored {
  index: number;
  teacher: string;
}

export interface TeacherFailed {
  index: number;
  teacher: string;
  error: string;
}

export interface RolloutFinished {
  reward: number | null;
  finishedAt: number;
  /** The weight version staleness is measured against (absent in journals before issue 24). */
  referenceVersion?: number | null;
}

export type RolloutCreatedEvent = Event<"rollout_created", RolloutCreated>;
export type TurnRegisteredEvent = Event<"turn_registered", TurnRegistered>;
export type TurnPlannedEvent = Event<"turn_planned", TurnPlanned>;
export type TurnRecordedEvent = Event<"turn_recorded", TurnRecorded>;
export type TurnFailedEvent = Event<"turn_failed", TurnFailed>;
export type TurnRetriedEvent = Event<"turn_retried", { index: number }>;
export type TurnRewardEvent = Event<"turn_reward", TurnReward>;
export type TeacherScoredEvent = Event<"teacher_scored", TeacherScored>;
export type TeacherFailedEvent = Event<"teacher_failed", TeacherFailed>;
export type HostCallEvent = Event<"host_call", HostCall>;
export type AgentExitEvent = Event<"agent_exit", AgentExit>;
export type RolloutFinishedEvent = Event<"rollout_finished", RolloutFinished>;

/** One change to one rollout. */
export type JournalEvent =
  | RolloutCreatedEvent
  | TurnRegisteredEvent
  | TurnPlannedEvent
  | TurnRecordedEvent
  | TurnFailedEvent
  | TurnRetriedEvent
  | TurnRewardEvent
  | TeacherScoredEvent
  | TeacherFailedEvent
  | HostCallEvent
  | AgentExitEvent
  | RolloutFinishedEvent;

export function rolloutCreated(rollout: Rollout, spec: CreateRollout): RolloutCreatedEvent {
  const { id, token, createdAt } = rollout;
  return { rollout: id, kind: "rollout_created", data: { ...spec, id, token, createdAt } };
}

export function rolloutFinished(rollout: Rollout): RolloutFinishedEvent {
  return {
    rollout: rollout.id,
    kind: "rollout_finished",
    data: {
      reward: rollout.reward,
      finishedAt: rollout.finishedAt!,
      referenceVersion: rollout.referenceVersion,
    },
  };
}

export function hostCall(rollout: Rollout, call: HostCall): HostCallEvent {
  return { rollout: rollout.id, kind: "host_call", data: { ...call } };
}

export function agentExit(rollout: Rollout, exit: AgentExit): AgentExitEvent {
  return { rollout: rollout.id, kind: "agent_exit", data: { ...exit } };
}

export function turnRegistered(
  turn: Turn,
  mount: Mount,
  req: CanonicalRequest,
  toolCallIdPrefix: string,
  blackBox: boolean,
): TurnRegisteredEvent {
  const { messages, tools: _tools, images: _bytes, ...request } = req;
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
  // The turn's tools are the array its root interned (the request's, as JSON): the same object
  // every turn under that root, so the journal hashes it once.
  return { rollout: turn.rolloutId, kind: "turn_registered", data, shared: { tools: turn.tools } };
}

/** What of a prompt plan is not turn fields: its ids (in `arrays`) and a rerender (apart). */
const NOT_PLAN = new Set(["bridgeIds", "deltaIds", "rerender"]);

export function turnPlanned(
  turn: Turn,
  plan: { rerender?: Rerender },
  requestId: string,
  sampling: SamplingRequest,
): TurnPlannedEvent {
  const data: TurnPlanned = {
    index: turn.index,
    requestId,
    sampling,
    maxTokens: turn.maxTokens,
    header: turn.header!,
    rendered: turn.timings.rendered!,
    plan: Object.fromEntries(Object.entries(plan).filter(([k]) => !NOT_PLAN.has(k))),
  };
  if (plan.rerender) data.rerender = plan.rerender;
  return {
    rollout: turn.rolloutId,
    kind: "turn_planned",
    data,
    arrays: { bridge_ids: turn.bridgeIds, delta_ids: turn.deltaIds },
  };
}

export function turnRecorded(turn: Turn): TurnRecordedEvent {
  const arrays: Record<string, ArrayLike<number>> = { output_ids: turn.outputIds };
  if (turn.logprobs) arrays.logprobs = turn.logprobs;
  return {
    rollout: turn.rolloutId,
    kind: "turn_recorded",
    data: {
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
    },
    arrays,
  };
}

export function turnFailed(turn: Turn): TurnFailedEvent {
  return {
    rollout: turn.rolloutId,
    kind: "turn_failed",
    data: { index: turn.index, error: turn.error ?? "", completed: turn.timings.completed },
  };
}

export function turnRetried(turn: Turn): TurnRetriedEvent {
  return { rollout: turn.rolloutId, kind: "turn_retried", data: { index: turn.index } };
}

export function turnReward(turn: Turn, reward: number): TurnRewardEvent {
  return { rollout: turn.rolloutId, kind: "turn_reward", data: { index: turn.index, reward } };
}

export function teacherScored(
  turn: Turn,
  teacher: string,
  logprobs: Float64Array,
): TeacherScoredEvent {
  return {
    rollout: turn.rolloutId,
    kind: "teacher_scored",
    data: { index: turn.index, teacher },
    arrays: { logprobs },
  };
}

export function teacherFailed(turn: Turn, teacher: string, error: string): TeacherFailedEvent {
  return {
    rollout: turn.rolloutId,
    kind: "teacher_failed",
    data: { index: turn.index, teacher, error },
  };
}
