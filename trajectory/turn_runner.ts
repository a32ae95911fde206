/**
 * A turn end to end, minus HTTP: mount the history in the rollout's tree, build the prompt ids
 * (the mounted turn's exact ids + the rendered delta, or a full render for a new chain), have the
 * backend generate, parse, record. A client retry of a recorded (or still pending) turn gets that
 * same turn back instead of a second one. Black-box turns (a hosted API answered) are registered
 * and recorded by the same code, at the message level. The runner knows the turns in flight, so a
 * shutdown can stop taking new ones and wait for those (`close`, `whenIdle`).
 *
 * @module
 */
import {
  type GenerationBackend,
  GenerationError,
  PauseGate,
  type SamplingRequest,
} from "../generation/mod.ts";
import type {
  AssistantMessage,
  CanonicalRequest,
  Message,
  StopReason,
  TurnAnswer,
} from "../canonical/mod.ts";
import {
  type DeltaHistory,
  NativeMemoryTrim,
  type PolicyModel,
  type Rendered,
} from "../model/mod.ts";
import type { Rollout } from "./rollout.ts";
import {
  answerId,
  type HistoryNode,
  placeOutput,
  placePrompt,
  promptIds,
  type Turn,
} from "./turn.ts";
import { rowsFromFor, rowsLikeFor } from "./chain_rows.ts";
import { turnFacts } from "./turn_facts.ts";
import { type Mount, TurnTree } from "./turn_tree.ts";
import { findDrift } from "./drift.ts";
import { findToolSpans } from "./tool_spans.ts";
import { LiveAnswer } from "./live_answer.ts";
import { TurnError } from "./turn_error.ts";
import { fail, type OpenOptions, type OpenTurn, openTurn, record, refuse } from "./turn_record.ts";
import { turnPlanned, turnRetried } from "./journal_events.ts";
import { JournalWriter } from "./journal_writer.ts";
import type { TurnObserver } from "./turn_observer.ts";

function randomId(bytes = 12): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/**
 * The tool calls a delta's tool results answer, looked up in the message tree upwards from where
 * the delta starts and no further than the last user message (results follow their calls), so a
 * lookup costs what it reads, not the history, and needs nothing of the request's own copy.
 */
function callsAbove(node: HistoryNode): DeltaHistory {
  const find = (id: string) => {
    for (
      let n: HistoryNode | null = node;
      n?.message && n.message.role !== "user";
      n = n.parent
    ) {
      const m = n.message;
      const calls = m.role === "assistant" ? m.tool_calls ?? [] : [];
      const index = calls.findIndex((c) => c.id === id);
      if (index >= 0) return { call: calls[index], index, count: calls.length };
    }
    return undefined;
  };
  return {
    toolCall: (id) => find(id)?.call,
    callPosition(id) {
      const found = find(id);
      return found && { index: found.index, count: found.count };
    },
  };
}

/** The node of `node`'s path at `depth` (an ancestor, or itself). */
function ancestorAt(node: HistoryNode, depth: number): HistoryNode {
  let n = node;
  while (n.depth > depth) n = n.parent!;
  return n;
}

/**
 * What rendering a turn's prompt needs of its request: the new messages alone when it extends a
 * recorded turn (a delta), the whole history for a new chain. Taken before the render awaits, so
 * the request's parsed history (most of it already in the tree) can be collected meanwhile.
 */
interface PromptWork {
  base: Turn | null;
  /** How many messages come before `messages` (the base's history and answer). */
  baseDepth: number;
  messages: Message[];
  tools: CanonicalRequest["tools"];
  history?: DeltaHistory;
  splitSpecialTokens: boolean;
}

function promptWork(mount: Mount, req: CanonicalRequest, splitSpecialTokens: boolean): PromptWork {
  const { base, baseDepth } = mount;
  return {
    base,
    baseDepth,
    messages: base ? req.messages.slice(baseDepth) : req.messages,
    tools: req.tools,
    history: base ? callsAbove(ancestorAt(mount.node, baseDepth)) : undefined,
    splitSpecialTokens,
  };
}

/** An empty conversation would send the policy a bare generation prompt; the APIs refuse it too. */
function requireMessages(req: CanonicalRequest): void {
  if (req.messages.length === 0) {
    throw new TurnError(
      "invalid_request",
      "the request has no messages: at least one message is required",
    );
  }
}

/** What a hosted API answered, read back into the canonical message (black-box turns). */
export interface BlackBoxAnswer {
  message: AssistantMessage;
  usage: { input_tokens: number; output_tokens: number };
}

interface PromptPlan {
  bridgeIds: number[];
  deltaIds: number[];
  promptLength: number;
  renderedMessages: number;
  toolSpans: Turn["toolSpans"];
  specialText: Turn["specialText"];
}

/** Bounds on what agents may ask of the gateway; each has a default. */
export interface TurnLimits {
  /** Turns of one rollout waiting for their answer at once. */
  maxPendingPerRollout: number;
  /** Turns of all rollouts waiting for their answer at once. */
  maxPending: number;
  /** Messages in one request's history. */
  maxHistoryMessages: number;
}

export const DEFAULT_TURN_LIMITS: Readonly<TurnLimits> = {
  maxPendingPerRollout: 64,
  maxPending: 4096,
  maxHistoryMessages: 20_000,
};

/** Every wait of a turn ends: how long, by default. */
export const DEFAULT_TURN_TIMEOUT_MS = 600_000;
export const DEFAULT_ABANDON_GRACE_MS = 10_000;

export interface TurnRunnerOptions {
  /** Holds new generations while a trainer syncs weights (`POST /api/pause`). */
  pause?: PauseGate;
  /**
   * Longest time a turn waits for its answer (held by a pause, queued, generating). Past it the
   * generation is withdrawn and the agent gets a `turn_timeout` error, which it may retry.
   */
  turnTimeoutMs?: number;
  /**
   * How long a turn whose every client disconnected keeps its generation, so the agent's retry
   * re-attaches to it; then the generation is withdrawn (the trainer gets `withdrawn`).
   */
  abandonGraceMs?: number;
  limits?: Partial<TurnLimits>;
  /** Where turns are journaled (the store's writer); default: nowhere. */
  writer?: JournalWriter;
  /** Told when each turn starts and ends (metrics). */
  observer?: TurnObserver;
}

export class TurnRunner {
  readonly pause: PauseGate;
  readonly turnTimeoutMs: number;
  readonly abandonGraceMs: number;
  readonly limits: TurnLimits;
  readonly writer: JournalWriter;
  readonly observer?: TurnObserver;
  /** Pending turns by the request id their backend got. */
  readonly #byRequest = new Map<string, Turn>();
  /** Turns registered and not yet settled (recorded or failed, and durable). */
  readonly #inFlight = new Set<OpenTurn>();
  /** Turns in flight, per rollout id. */
  readonly #pending = new Map<string, number>();
  #idle: (() => void)[] = [];
  /** Set by `close`: why new turns are refused. */
  #closed: string | undefined;

  /**
   * @param backend the default generation backend
   * @param backends named backends a rollout can choose (`CreateRollout.backend`)
   */
  constructor(
    readonly model: PolicyModel,
    readonly backend: GenerationBackend,
    readonly backends: Readonly<Record<string, GenerationBackend>> = {},
    options: TurnRunnerOptions = {},
  ) {
    this.pause = options.pause ?? new PauseGate();
    this.turnTimeoutMs = options.turnTimeoutMs ?? DEFAULT_TURN_TIMEOUT_MS;
    this.abandonGraceMs = options.abandonGraceMs ?? DEFAULT_ABANDON_GRACE_MS;
    this.limits = { ...DEFAULT_TURN_LIMITS, ...options.limits };
    this.writer = options.writer ?? new JournalWriter();
    this.observer = options.observer;
  }

  /** The pending turn a backend request belongs to (a trainer's completion awaits its record). */
  turnOfRequest(requestId: string): Turn | undefined {
    return this.#byRequest.get(requestId);
  }

  /** Turns waiting for their answer (of one rollout, or of all). */
  pendingTurns(rolloutId?: string): number {
    return rolloutId === undefined ? this.#inFlight.size : this.#pending.get(rolloutId) ?? 0;
  }

  /** How many turns are in flight (registered, not yet recorded or failed). */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Takes no new turns from now on: each is refused with a `shutting_down` {@link TurnError}
   * carrying `reason`. Turns in flight go on, and a client's retry still reaches its turn.
   */
  close(reason: string): void {
    this.#closed = reason;
  }

  /** Resolves once no turn is in flight. */
  whenIdle(): Promise<void> {
    if (this.#inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Fails every turn still in flight with `reason` (a shutdown whose grace period ran out). */
  abandon(reason: string): void {
    for (const open of [...this.#inFlight]) {
      // The trainer's request is withdrawn with the reason; the agent gets a retryable 503.
      this.#aborts.get(open.turn)?.controller.abort(new GenerationError("cancelled", reason));
      fail(open, new TurnError("shutting_down", reason));
    }
  }

  #refuseWhenClosed(open: OpenTurn): void {
    if (this.#closed !== undefined) throw refuse(open, "shutting_down", this.#closed);
  }

  /** The backend serving a rollout. */
  backendFor(rollout: Rollout): GenerationBackend {
    return (rollout.backend && this.backends[rollout.backend]) || this.backend;
  }

  /**
   * Counts a client waiting on `turn`. When every waiter's connection is gone while the turn is
   * still generating, the generation is withdrawn after the abandon grace (engines free the slot,
   * the gate withdraws the request), unless a retry re-attaches first.
   */
  watch(turn: Turn, clientSignal: AbortSignal | undefined): void {
    const abort = this.#aborts.get(turn);
    if (!clientSignal || !abort || turn.status !== "pending") return;
    abort.waiters++;
    clearTimeout(abort.grace);
    clientSignal.addEventListener("abort", () => {
      if (--abort.waiters > 0 || turn.status !== "pending") return;
      const seconds = this.abandonGraceMs / 1000;
      abort.grace = setTimeout(() => {
        abort.controller.abort(
          new GenerationError(
            "client_gone",
            `the agent disconnected and did not retry within ${seconds} s`,
          ),
        );
      }, this.abandonGraceMs);
    }, { once: true });
  }

  readonly #aborts = new WeakMap<
    Turn,
    { controller: AbortController; waiters: number; grace?: ReturnType<typeof setTimeout> }
  >();

  /**
   * Registers the turn synchronously (so a concurrent retry finds it), then renders. Throws a
   * {@link TurnError} for requests that cannot become a turn (finished rollout, template error,
   * prompt longer than the context). Generation continues in the background; `turn.header` is
   * set once this resolves, and `turn.result` settles with the answer.
   */
  async start(rollout: Rollout, req: CanonicalRequest, toolCallIdPrefix: string): Promise<Turn> {
    requireActive(rollout);
    requireMessages(req);
    this.#requireHistoryLimit(req);
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    if (mount.retryOf) {
      mount.retryOf.retries++;
      this.writer.record(turnRetried(mount.retryOf));
      return mount.retryOf;
    }
    this.writer.refuseIfFailed();
    this.#admit(rollout);
    const open = this.#open(rollout, req, mount, { idSuffix: randomId(4), toolCallIdPrefix });
    this.#refuseWhenClosed(open);
    const { turn } = open;
    turn.live = new LiveAnswer();

    const work = promptWork(mount, req, rollout.splitSpecialTokens);
    const { model } = req;
    const sampling: SamplingRequest = {
      max_tokens: 0,
      temperature: req.sampling.temperature ?? rollout.sampling.temperature,
      top_p: req.sampling.top_p ?? rollout.sampling.top_p,
      top_k: rollout.sampling.top_k,
      stop_token_ids: this.model.stopTokenIds,
    };
    const maxTokens = req.sampling.max_tokens ?? rollout.sampling.max_tokens;
    // From here on nothing reads `req`: its parsed history is garbage while the prompt renders.
    let plan: PromptPlan;
    try {
      plan = await this.#planPrompt(work);
    } catch (e) {
      throw refuse(
        open,
        "render_failed",
        `cannot render the conversation: ${(e as Error).message}`,
      );
    }
    const { bridgeIds, deltaIds, ...planned } = plan;
    Object.assign(turn, planned);
    placePrompt(turn, bridgeIds, deltaIds);
    turn.timings.rendered = Date.now();
    const room = this.model.contextLength - turn.promptLength;
    if (room <= 0) {
      throw refuse(
        open,
        "context_exceeded",
        `prompt is ${turn.promptLength} tokens; the model's context is ${this.model.contextLength}`,
      );
    }
    turn.maxTokens = Math.min(maxTokens ?? room, room);
    turn.header = {
      id: answerId(turn),
      model,
      created: Math.floor(Date.now() / 1000),
      inputTokens: turn.promptLength,
      cachedTokens: turn.promptLength - bridgeIds.length - deltaIds.length,
    };
    sampling.max_tokens = turn.maxTokens;
    const requestId = `req_${randomId()}`;
    this.writer.record(turnPlanned(turn, plan, requestId, sampling));
    this.launch(open, requestId, sampling, toolCallIdPrefix);
    return turn;
  }

  /**
   * Generates a registered, planned turn and records the answer (or the failure), in the
   * background, under the turn timeout. A restored pending turn starts here again, with its
   * request id.
   */
  launch(
    open: OpenTurn,
    requestId: string,
    sampling: SamplingRequest,
    toolCallIdPrefix: string,
  ): void {
    const { turn } = open;
    turn.live ??= new LiveAnswer();
    this.#byRequest.set(requestId, turn);
    const controller = new AbortController();
    this.#aborts.set(turn, { controller, waiters: 0 });
    const seconds = this.turnTimeoutMs / 1000;
    const deadline = setTimeout(() => {
      controller.abort(
        new GenerationError(
          "turn_timeout",
          `no answer within ${seconds} s (the gateway's turn timeout); the request was withdrawn, retry it`,
        ),
      );
    }, this.turnTimeoutMs);
    this.#generate(open, requestId, sampling, toolCallIdPrefix, controller.signal)
      .then((answer) => record(open, answer))
      .catch((e) => fail(open, e))
      .finally(() => {
        clearTimeout(deadline);
        clearTimeout(this.#aborts.get(turn)?.grace);
        // The controller (and whatever listens to its signal) must not live as long as the turn.
        this.#aborts.delete(turn);
        turn.result.finally(() => this.#byRequest.delete(requestId)).catch(() => {});
      });
  }

  #requireHistoryLimit(req: CanonicalRequest): void {
    const max = this.limits.maxHistoryMessages;
    if (req.messages.length > max) {
      throw new TurnError(
        "history_too_large",
        `the history has ${req.messages.length} messages; the gateway accepts at most ${max} (--max-history-messages)`,
      );
    }
  }

  /** Refuses a new turn when too many wait already (the agent retries a 429 later). */
  #admit(rollout: Rollout): void {
    const { maxPendingPerRollout, maxPending } = this.limits;
    if (this.pendingTurns(rollout.id) >= maxPendingPerRollout) {
      throw new TurnError(
        "too_many_pending",
        `rollout ${rollout.id} already has ${maxPendingPerRollout} turns waiting for an answer (--max-pending-per-rollout); retry later`,
      );
    }
    if (this.#inFlight.size >= maxPending) {
      throw new TurnError(
        "too_many_pending",
        `the gateway already has ${maxPending} turns waiting for an answer (--max-pending); retry later`,
      );
    }
  }

  /** Registers a turn and tracks it in flight until it settles. */
  #open(
    rollout: Rollout,
    req: CanonicalRequest,
    mount: Mount,
    o: OpenOptions,
  ): OpenTurn {
    const backend = o.blackBox ? rollout.backend ?? "black-box" : this.backendFor(rollout).name;
    return this.track(openTurn(rollout, req, mount, this.writer, o), backend);
  }

  /**
   * Counts a registered turn in flight until it settles (its waiters answered): the admission
   * limits and a shutdown's drain see it, and the observer too when `backend` is named (a turn
   * replayed from the journal is not served again by this process).
   */
  track(open: OpenTurn, backend?: string): OpenTurn {
    const { rollout } = open;
    this.#pending.set(rollout.id, this.pendingTurns(rollout.id) + 1);
    this.#inFlight.add(open);
    if (backend !== undefined) this.observer?.turnStarted(backend);
    const settled = (error?: unknown) => {
      this.#inFlight.delete(open);
      const n = this.pendingTurns(rollout.id) - 1;
      if (n > 0) this.#pending.set(rollout.id, n);
      else this.#pending.delete(rollout.id);
      if (backend !== undefined) {
        this.observer?.turnEnded({
          backend,
          turn: open.turn,
          addedMs: performance.now() - open.startedAt - open.backendMs,
          ...(error === undefined ? {} : { error }),
        });
      }
      if (this.#inFlight.size === 0) { for (const resolve of this.#idle.splice(0)) resolve(); }
    };
    open.turn.result.then(() => settled(), settled);
    return open;
  }

  /**
   * A turn answered by a hosted API (black-box): registered like every turn, then `ask` is
   * called for the answer, which is recorded at the message level (no token ids: the hosted
   * model's tokenizer is not the policy's), or fails the turn. Every request is a new turn: a
   * relay cannot replay a hosted API's own events, so a client's retry is forwarded again.
   */
  startBlackBox(
    rollout: Rollout,
    req: CanonicalRequest,
    ask: () => Promise<BlackBoxAnswer>,
  ): Turn {
    requireActive(rollout);
    this.#requireHistoryLimit(req);
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    this.writer.refuseIfFailed();
    this.#admit(rollout);
    const open = this.#open(rollout, req, mount, {
      idSuffix: "bb",
      toolCallIdPrefix: "",
      blackBox: true,
    });
    this.#refuseWhenClosed(open);
    const { turn } = open;
    turn.renderedMessages = req.messages.length - mount.baseDepth;
    turn.maxTokens = req.sampling.max_tokens ?? 0;
    const asked = performance.now();
    ask().finally(() => open.backendMs = performance.now() - asked).then(({ message, usage }) => {
      turn.promptLength = usage.input_tokens;
      turn.timings.rendered = turn.timings.received;
      record(open, {
        id: "",
        model: req.model,
        message,
        stopReason: "stop",
        usage: { ...usage, reasoning_tokens: 0, cached_tokens: 0 },
        created: Math.floor(Date.now() / 1000),
      });
    }).catch((e) => fail(open, e));
    return turn;
  }

  /** The policy's real prompt length for a request, without recording anything. */
  async countTokens(rollout: Rollout, req: CanonicalRequest): Promise<number> {
    requireMessages(req);
    this.#requireHistoryLimit(req);
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    const recorded = mount.retryOf;
    if (recorded && recorded.status === "done") return recorded.promptLength;
    return (await this.#planPrompt(promptWork(mount, req, rollout.splitSpecialTokens)))
      .promptLength;
  }

  async #planPrompt(work: PromptWork): Promise<PromptPlan> {
    const { base, messages, tools } = work;
    const options = { splitSpecialTokens: work.splitSpecialTokens };
    if (!base) {
      const rendered = await this.model.renderFull(messages, tools, true, options);
      return {
        bridgeIds: [],
        deltaIds: rendered.ids,
        promptLength: rendered.ids.length,
        renderedMessages: messages.length,
        toolSpans: this.#toolSpans(rendered, messages, 0),
        specialText: rendered.specialText,
      };
    }
    const rendered = await this.model.renderDeltaIds(messages, tools, options, work.history);
    const { bridgeIds, deltaIds } = await this.model.joinTurn(
      Array.from(base.outputIds),
      rendered.ids,
    );
    // Positions in the whole prompt: after the base's prompt, its output and the bridge, less
    // the leading ids the join shared with the output (GLM's role marker).
    const offset = base.promptLength + base.outputIds.length + bridgeIds.length;
    const shared = rendered.ids.length - deltaIds.length;
    return {
      bridgeIds,
      deltaIds,
      promptLength: offset + deltaIds.length,
      renderedMessages: messages.length,
      toolSpans: this.#toolSpans(
        {
          ...rendered,
          ids: deltaIds,
          toolOutputs: rendered.toolOutputs?.map((o) => ({
            start: o.start - shared,
            end: o.end - shared,
          })),
        },
        messages,
        bridgeIds.length,
      ),
      specialText: rendered.specialText.map((hit) => ({
        ...hit,
        message: hit.message + work.baseDepth,
        position: hit.position === null ? null : hit.position - shared + offset,
      })),
    };
  }

  #toolSpans(rendered: Rendered, messages: readonly Message[], offset: number): Turn["toolSpans"] {
    const outputs = messages.flatMap((m) => (m.role === "tool" ? [m] : []));
    if (rendered.toolOutputs) {
      return rendered.toolOutputs.map((s, k) => ({
        start: s.start + offset,
        end: s.end + offset,
        tool_call_id: outputs[k]?.tool_call_id ?? "",
      }));
    }
    const markers = this.model.toolResponseMarkers;
    if (!markers) return [];
    const callIds = outputs.map((m) => m.tool_call_id);
    return findToolSpans(rendered.ids, markers, callIds).map((s, k) => ({
      ...s,
      start: s.start + offset,
      // An empty output leaves only the template's two newlines (merged into one token).
      end: (outputs[k]?.content === "" ? s.start : s.end) + offset,
    }));
  }

  async #generate(
    open: OpenTurn,
    requestId: string,
    sampling: SamplingRequest,
    toolCallIdPrefix: string,
    signal: AbortSignal,
  ): Promise<TurnAnswer> {
    const { rollout, turn } = open;
    // Nothing reaches a backend before the journal has the turn and its prompt.
    await this.writer.durable();
    const asked = performance.now();
    const release = await this.pause.enter(signal).finally(() =>
      open.backendMs = performance.now() - asked
    );
    const live = turn.live!;
    // Streamed ids go through the streaming parser in order; the complete parse below is the truth.
    const stream = this.model.streamingParser();
    let parsing = Promise.resolve();
    const onTokens = (ids: number[]) => {
      parsing = parsing.then(async () => {
        const { reasoning, text } = await stream.push(ids);
        live.push({ kind: "reasoning", delta: reasoning });
        live.push({ kind: "text", delta: text });
      }).catch(() => {});
    };
    const rowsFrom = rowsFromFor(turn, "routed_experts");
    const completion = await this.backendFor(rollout).generate({
      requestId,
      rolloutId: rollout.id,
      turnId: turn.id,
      promptIds: promptIds(turn),
      sampling,
      routingKey: rollout.id,
      onTokens,
      signal,
      routedExpertsFrom: rowsFrom,
      routedExpertsLike: rowsLikeFor(turn, "routed_experts"),
    }).finally(() => {
      release();
      open.backendMs = performance.now() - asked;
    });
    await parsing;
    // Abandoned meanwhile (a shutdown's grace period ran out): a late answer is not recorded.
    if (turn.status !== "pending") throw new TurnError("shutting_down", turn.error ?? "abandoned");
    const parsed = await this.model.parse(
      completion.output_ids,
      () => toolCallIdPrefix + randomId(),
      turn.tools,
    );
    placeOutput(turn, completion.output_ids);
    turn.logprobs = completion.logprobs ? Float64Array.from(completion.logprobs) : null;
    turn.finishReason = completion.finish_reason;
    turn.weightVersion = completion.weight_version;
    turn.facts = turnFacts(completion, sampling, rowsFrom);
    if (completion.routed_experts) {
      // The rows go to the journal now; the turn keeps where they lie, not the bytes.
      this.writer.putRows(rollout.id, turn.id, "routed_experts", completion.routed_experts);
      // Its request body, text and decoded copies are ~3× the rows, freed into glibc's arenas.
      void NativeMemoryTrim.shared().afterLargeBuffers(3 * completion.routed_experts.bytes.length);
    }
    turn.malformedToolCalls = parsed.malformedToolCalls;
    if (completion.finish_reason === "stop") {
      // An output that stopped without its end id gets it bridged (untrained) in the next
      // prompt; that is not drift.
      const answer = await this.model.renderAnswerIds(parsed.message);
      turn.drift = findDrift(answer, await this.model.closedOutput(completion.output_ids, answer));
    }
    const stopReason: StopReason = completion.finish_reason === "length"
      ? "length"
      : parsed.message.tool_calls?.length
      ? "tool_calls"
      : "stop";
    const header = turn.header!;
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
}

function requireActive(rollout: Rollout): void {
  if (rollout.status !== "active") {
    throw new TurnError(
      "rollout_finished",
      `rollout ${rollout.id} is finished and takes no more turns`,
    );
  }
}
