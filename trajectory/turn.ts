/**
 * One LLM call of an agent, as recorded: where its prompt came from and what the policy sampled.
 *
 * A turn adds only its own ids (`bridgeIds` + `deltaIds`, then `outputIds`) to its chain's line
 * of ids (`id_line.ts`); its full prompt is its parent's prompt + the parent's output + those ids,
 * which on the line is one view, so memory grows with new content, not with context length ×
 * turns, and no turn copies its prompt. Likewise its history is not a copy of the request's messages: it is
 * where the request ends in the rollout's message tree (`history`), whose nodes every request
 * through them shares, plus the few messages the request sent in another form than the tree's
 * (`historyEdits`).
 *
 * @module
 */
import type {
  AnswerHeader,
  AssistantMessage,
  ImageRef,
  Message,
  Protocol,
  StopReason,
  ToolSpec,
  TurnAnswer,
} from "../canonical/mod.ts";
import type { FinishReason, PromptBase } from "../generation/mod.ts";
import type { SpecialTextHit } from "../model/mod.ts";
import type { LiveAnswer } from "./live_answer.ts";
import { IdLine, NO_IDS } from "./id_line.ts";
import type { TurnFacts } from "./turn_facts.ts";

/** How a turn's prompt was built. */
export type MountKind =
  /** first turn of a chain in a fresh rollout: full render */
  | "root"
  /** the history extends an earlier turn verbatim: that turn's ids + rendered delta */
  | "extend"
  /** the history is not an extension of any recorded turn: a new chain from a full render */
  | "rewritten"
  /**
   * the history extends a recorded turn, but the engine's render of it does not extend that
   * turn's ids: a new chain from the engine's full render (`rerender`)
   */
  | "rerendered";

export type TurnStatus = "pending" | "done" | "failed";

/** Where re-rendering the recorded answer would not give back the sampled ids. */
export interface Drift {
  /**
   * Index into `outputIds` of the first differing id; negative when a full render already
   * writes the generation prompt before the answer otherwise (an empty think block tokenized
   * across it): counted back from the output's first id.
   */
  position: number;
  /** What the template renders there (a few ids). */
  rendered: number[];
  /** What was sampled there (a few ids; from the generation prompt on at a negative position). */
  sampled: number[];
}

/** A node of the rollout's message tree (`MessageNode`): one message and the path above it. */
export interface HistoryNode {
  readonly message: Message | null;
  readonly parent: HistoryNode | null;
  /** Messages from the root to this node, this one included. */
  readonly depth: number;
}

/** The node of `node`'s path at `depth` (an ancestor, or itself). */
export function ancestorAt(node: HistoryNode, depth: number): HistoryNode {
  let n = node;
  while (n.depth > depth) n = n.parent!;
  return n;
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

/**
 * Where one image's tokens (its pads) lie in a turn's context ids (bridge + delta, half-open), and
 * which image it is: its hash (the bytes are in the image store) and size.
 */
export interface TurnImage extends ImageRef {
  start: number;
  end: number;
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
  /** The images the turn rendered (the new ones of a delta, all of a full render), in order. */
  images: TurnImage[];
  /** Where the request's history ends in the message tree. */
  history: HistoryNode;
  historyEdits: HistoryEdits;
  /** The request's canonical history, assembled from `history` (costs a walk: not per turn). */
  readonly messages: Message[];
  tools: ToolSpec[];
  /** How many trailing messages were rendered as the delta (all of them for a full render). */
  renderedMessages: number;
  /** Where the turn's ids lie on its chain's line (set by `placePrompt` and `placeOutput`). */
  ids: TurnIds;
  /** Untrained end-of-turn ids appended after the parent's output when it stopped without them. */
  readonly bridgeIds: Int32Array;
  /** Ids rendered for this turn: the delta, or the full prompt when `parent` is null. */
  readonly deltaIds: Int32Array;
  promptLength: number;
  maxTokens: number;
  /** What the policy sampled. */
  readonly outputIds: Int32Array;
  /**
   * Aligned with `outputIds`; null when the producer gave none. Typed: parsed JSON numbers would
   * be one heap object each (24 bytes a logprob, most of a long run's heap; issue 20).
   */
  logprobs: Float64Array | null;
  finishReason?: FinishReason;
  /** The weight version its first sampled id came from (every run in `facts.versions`). */
  weightVersion?: string | number;
  /** Sampling facts, per-chunk weight versions and where the turn's token rows lie. */
  facts?: TurnFacts;
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

/** What a new turn is made of: everything but what a turn derives (its history and id views). */
export type TurnFields = Omit<Turn, "messages" | "bridgeIds" | "deltaIds" | "outputIds">;

/**
 * A turn in memory. A class and not an object literal: V8 keeps a literal with getters as a
 * dictionary (slower to read, and ~1.4 kB more per turn, 140 MB over 100,000 turns; issue 20);
 * every field is set here in one order, so all turns share one hidden class.
 */
class TurnState implements Turn {
  id: string;
  index: number;
  rolloutId: string;
  protocol: Protocol;
  parent: Turn | null;
  mount: MountKind;
  chain: number;
  retries: number;
  session: string | null;
  next: Turn | null;
  specialText: SpecialTextHit[];
  drift: Drift | null;
  live?: LiveAnswer;
  blackBox?: true;
  toolSpans: ToolSpan[];
  images: TurnImage[];
  history: HistoryNode;
  historyEdits: HistoryEdits;
  tools: ToolSpec[];
  renderedMessages: number;
  ids: TurnIds;
  promptLength: number;
  maxTokens: number;
  logprobs: Float64Array | null;
  finishReason?: FinishReason;
  weightVersion?: string | number;
  facts?: TurnFacts;
  message?: AssistantMessage;
  header?: AnswerHeader;
  answer?: TurnAnswer;
  malformedToolCalls: number;
  status: TurnStatus;
  error?: string;
  result: Promise<TurnAnswer>;
  timings: { received: number; rendered?: number; completed?: number };

  constructor(f: TurnFields) {
    this.id = f.id;
    this.index = f.index;
    this.rolloutId = f.rolloutId;
    this.protocol = f.protocol;
    this.parent = f.parent;
    this.mount = f.mount;
    this.chain = f.chain;
    this.retries = f.retries;
    this.session = f.session;
    this.next = f.next;
    this.specialText = f.specialText;
    this.drift = f.drift;
    this.live = f.live;
    this.blackBox = f.blackBox;
    this.toolSpans = f.toolSpans;
    this.images = f.images;
    this.history = f.history;
    this.historyEdits = f.historyEdits;
    this.tools = f.tools;
    this.renderedMessages = f.renderedMessages;
    this.ids = f.ids;
    this.promptLength = f.promptLength;
    this.maxTokens = f.maxTokens;
    this.logprobs = f.logprobs;
    this.finishReason = f.finishReason;
    this.weightVersion = f.weightVersion;
    this.facts = f.facts;
    this.message = f.message;
    this.header = f.header;
    this.answer = f.answer;
    this.malformedToolCalls = f.malformedToolCalls;
    this.status = f.status;
    this.error = f.error;
    this.result = f.result;
    this.timings = f.timings;
  }

  get messages(): Message[] {
    return historyOf(this.history, this.historyEdits);
  }
  get bridgeIds(): Int32Array {
    return this.ids.line.view(this.ids.bridgeStart, this.ids.deltaStart);
  }
  get deltaIds(): Int32Array {
    return this.ids.line.view(this.ids.deltaStart, this.ids.outputStart);
  }
  get outputIds(): Int32Array {
    return this.ids.line.view(this.ids.outputStart, this.ids.outputEnd);
  }
}

/** A turn with these fields (its views derived from `ids`, its history from `history`). */
export function newTurn(fields: TurnFields): Turn {
  return new TurnState(fields);
}

/** The id protocols build their message/response ids from (`msg_…`, `resp_…`). */
export function answerId(turn: Turn): string {
  return turn.id.replaceAll(".", "_");
}

/** The answer a generated turn gives its agent: its header, the parsed message, why it stopped. */
export function turnAnswer(
  header: AnswerHeader,
  parsed: { message: AssistantMessage; reasoningTokens: number },
  completion: { output_ids: ArrayLike<number>; finish_reason: FinishReason },
): TurnAnswer {
  const stopReason: StopReason = completion.finish_reason === "length"
    ? "length"
    : parsed.message.tool_calls?.length
    ? "tool_calls"
    : "stop";
  return {
    id: header.id,
    model: header.model,
    message: parsed.message,
    stopReason,
    usage: {
      input_tokens: header.inputTokens,
      output_tokens: completion.output_ids.length,
      reasoning_tokens: parsed.reasoningTokens,
      cached_tokens: header.cachedTokens,
    },
    created: Math.floor(Date.now() / 1000),
  };
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

/** The earlier turn whose prompt and output `turn`'s prompt starts with (its parent's), if any. */
export function promptBaseOf(turn: Turn): PromptBase | undefined {
  const p = turn.parent;
  return p ? { turnId: p.id, length: p.promptLength + p.outputIds.length } : undefined;
}

/** The first message of a turn's history (its system prompt, when it has one). */
export function firstMessage(turn: Turn): Message | undefined {
  const edited = turn.historyEdits.find(([i]) => i === 0);
  if (edited) return edited[1];
  let n: HistoryNode = turn.history;
  while (n.depth > 1) n = n.parent!;
  return n.depth === 1 ? n.message! : undefined;
}

/**
 * Where a turn's ids lie on its line, one part after the other: the bridge, the delta (together
 * the end of the prompt, which starts at 0), the output.
 */
export interface TurnIds {
  line: IdLine;
  bridgeStart: number;
  deltaStart: number;
  /** The prompt's end. */
  outputStart: number;
  outputEnd: number;
}

/** Where a turn without ids yet lies: nowhere. */
export function noIds(): TurnIds {
  return { line: NO_IDS, bridgeStart: 0, deltaStart: 0, outputStart: 0, outputEnd: 0 };
}

/**
 * Puts a planned turn's bridge and delta on a line: its parent's, when the parent is that line's
 * tip, else a new line (a fork copies the shared prefix once; a new chain starts empty).
 */
export function placePrompt(
  turn: Turn,
  bridge: ArrayLike<number>,
  delta: ArrayLike<number>,
): void {
  const parent = turn.parent?.ids;
  let line: IdLine;
  if (!parent || parent.line === NO_IDS) line = new IdLine(bridge.length + delta.length);
  else if (parent.line.length === parent.outputEnd) line = parent.line;
  else line = parent.line.fork(parent.outputEnd);
  const bridgeStart = line.length;
  line.append(bridge);
  const deltaStart = line.length;
  line.append(delta);
  turn.ids = { line, bridgeStart, deltaStart, outputStart: line.length, outputEnd: line.length };
}

/** Puts a turn's sampled ids after its prompt (a turn whose line went on meanwhile forks). */
export function placeOutput(turn: Turn, output: ArrayLike<number>): void {
  const ids = turn.ids;
  if (ids.line === NO_IDS) {
    if (output.length === 0) return;
    placePrompt(turn, [], []);
  } else if (ids.line.length !== ids.outputEnd) {
    turn.ids = { ...ids, line: ids.line.fork(ids.outputStart), outputEnd: ids.outputStart };
  } else if (ids.outputEnd !== ids.outputStart) {
    throw new RangeError(`turn ${turn.id} has its output already`);
  }
  turn.ids.line.append(output);
  turn.ids.outputEnd = turn.ids.line.length;
}

/** The exact prompt ids of a turn: a view of its line, not a copy. */
export function promptIds(turn: Turn): Int32Array {
  return turn.ids.line.view(0, turn.ids.outputStart);
}

/** `Array.prototype.push(...x)` overflows the stack on long arrays; this does not. */
export function pushAll(target: number[], source: ArrayLike<number>): void {
  for (let i = 0; i < source.length; i++) target.push(source[i]);
}
