/**
 * One LLM call of an agent, as recorded: where its prompt came from and what the policy sampled.
 *
 * A turn stores only the ids it added (`bridgeIds` + `deltaIds`); its full prompt is its
 * parent's prompt + the parent's output + those ids, so memory grows with new content, not with
 * context length × turns.
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
  /** The request's canonical history. */
  messages: Message[];
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
