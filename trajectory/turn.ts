/**
 * One LLM call of an agent, as recorded: where its prompt came from and what the policy sampled.
 *
 * A turn stores only the ids it added (`bridgeIds` + `deltaIds`); its full prompt is its
 * parent's prompt + the parent's output + those ids, so memory grows with new content, not with
 * context length × turns. Likewise its history is not a copy of the request's messages: it is
 * where the request ends in the rollout's message tree (`history`), whose nodes every request
 * through them shares, plus the few messages the request sent in another form than the tree's
 * (`historyEdits`).
 *
 * @module
 */
import type {
  AnswerHeader,
  AssistantMessage,
  Message,
  Protocol,
  ToolSpec,
  TurnAnswer,
} from "../canonical/mod.ts";
import type { FinishReason } from "../generation/mod.ts";
import type { SpecialTextHit } from "../model/mod.ts";
import type { LiveAnswer } from "./live_answer.ts";

/** How a turn's prompt was built. */
export type MountKind =
  /** first turn of a chain in a fresh rollout: full render */
  | "root"
  /** the history extends an earlier turn verbatim: that turn's ids + rendered delta */
  | "extend"
  /** the history is not an extension of any recorded turn: a new chain from a full render */
  | "rewritten";

export type TurnStatus = "pending" | "done" | "failed";

/** Where re-rendering the recorded answer would not give back the sampled ids. */
export interface Drift {
  /** Index into `outputIds` of the first differing id. */
  position: number;
  /** What the template renders there (a few ids). */
  rendered: number[];
  /** What was sampled there (a few ids). */
  sampled: number[];
}

/** A node of the rollout's message tree (`MessageNode`): one message and the path above it. */
export interface HistoryNode {
  readonly message: Message | null;
  readonly parent: HistoryNode | null;
  /** Messages from the root to this node, this one included. */
  readonly depth: number;
}

/**
 * Messages a request sent in another form than the tree node it matched (`sameMessage` but not
 * identical, e.g. tool arguments re-serialized), by index: the history as the client sent it.
 */
export type HistoryEdits = readonly (readonly [number, Message])[];

/** Token range of one tool output's content inside a turn's context ids (bridge + delta). */
export interface ToolSpan {
  start: number;
  end: number;
  tool_call_id: string;
}

export interface Turn {
  id: string;
  /** Order of arrival within the rollout, from 0. */
  index: number;
  rolloutId: string;
  /** The wire protocol the agent spoke (how the viewer names its messages). */
  protocol: Protocol;
  parent: Turn | null;
  mount: MountKind;
  /** Chain id within the rollout (see `branch_label.ts`); extensions inherit their parent's. */
  chain: number;
  /** Identical re-sends answered from this turn (client retries). */
  retries: number;
  /** The client session the request came from, when the client names one (see `CanonicalRequest.session`). */
  session: string | null;
  /**
   * The live turn that continues this one on its chain. A chain is a line: a second live
   * extension starts a chain of its own (`fork_label.ts`).
   */
  next: Turn | null;
  /** Special-token text in the message content this turn rendered; count = length. */
  specialText: SpecialTextHit[];
  /** Set when a full render of the recorded answer differs from the sampled ids. */
  drift: Drift | null;
  /** Reasoning and text shown to clients while the answer is generated (streaming backends). */
  live?: LiveAnswer;
  /** The answer came from a hosted API: a message-level record, no token ids. */
  blackBox?: true;
  /** Tool-output content inside the context ids, for SFT masks. */
  toolSpans: ToolSpan[];
  /** Where the request's history ends in the message tree. */
  history: HistoryNode;
  historyEdits: HistoryEdits;
  /** The request's canonical history, assembled from `history` (costs a walk: not per turn). */
  readonly messages: Message[];
  tools: ToolSpec[];
  /** How many trailing messages were rendered as the delta (all of them for a full render). */
  renderedMessages: number;
  /** Untrained end-of-turn ids appended after the parent's output when it stopped without them. */
  bridgeIds: number[];
  /** Ids rendered for this turn: the delta, or the full prompt when `parent` is null. */
  deltaIds: number[];
  promptLength: number;
  maxTokens: number;
  outputIds: number[];
  /** Aligned with `outputIds`; null when the producer gave none. */
  logprobs: number[] | null;
  finishReason?: FinishReason;
  weightVersion?: string | number;
  message?: AssistantMessage;
  /** What the answer will say of itself before its first token (set once the prompt is built). */
  header?: AnswerHeader;
  answer?: TurnAnswer;
  malformedToolCalls: number;
  status: TurnStatus;
  error?: string;
  /** Settles when the turn is done or failed; replays (client retries) await the same promise. */
  result: Promise<TurnAnswer>;
  /** Milliseconds since the epoch. */
  timings: { received: number; rendered?: number; completed?: number };
}

/** The id protocols build their message/response ids from (`msg_…`, `resp_…`). */
export function answerId(turn: Turn): string {
  return turn.id.replaceAll(".", "_");
}

/** The messages from the tree's root to `node`, with the request's own forms put back. */
export function historyOf(node: HistoryNode, edits: HistoryEdits = []): Message[] {
  const messages = new Array<Message>(node.depth);
  for (let n: HistoryNode | null = node; n && n.depth > 0; n = n.parent) {
    messages[n.depth - 1] = n.message!;
  }
  for (const [i, m] of edits) messages[i] = m;
  return messages;
}

/** The first message of a turn's history (its system prompt, when it has one). */
export function firstMessage(turn: Turn): Message | undefined {
  const edited = turn.historyEdits.find(([i]) => i === 0);
  if (edited) return edited[1];
  let n: HistoryNode = turn.history;
  while (n.depth > 1) n = n.parent!;
  return n.depth === 1 ? n.message! : undefined;
}

/** The exact prompt ids of a turn, assembled from its ancestors. */
export function promptIds(turn: Turn): number[] {
  const chain: Turn[] = [];
  for (let t: Turn | null = turn; t; t = t.parent) chain.push(t);
  chain.reverse();
  const ids: number[] = [];
  chain.forEach((t, i) => {
    pushAll(ids, t.bridgeIds);
    pushAll(ids, t.deltaIds);
    if (i < chain.length - 1) pushAll(ids, t.outputIds);
  });
  return ids;
}

/** `Array.prototype.push(...x)` overflows the stack on long arrays; this does not. */
export function pushAll(target: number[], source: readonly number[]): void {
  for (let i = 0; i < source.length; i++) target.push(source[i]);
}
