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
import { type GenerationBackend, PauseGate } from "../generation/mod.ts";
import type {
  AssistantMessage,
  CanonicalRequest,
  Message,
  StopReason,
  TurnAnswer,
} from "../canonical/mod.ts";
import type { DeltaHistory, PolicyModel, Rendered } from "../model/mod.ts";
import type { Rollout } from "./rollout.ts";
import { answerId, promptIds, type Turn } from "./turn.ts";
import { type MessageNode, type Mount, TurnTree } from "./turn_tree.ts";
import { openAgentCalls, registerTurn } from "./assign_chain.ts";
import { findDrift } from "./drift.ts";
import { findToolSpans } from "./tool_spans.ts";
import { LiveAnswer } from "./live_answer.ts";
import { TurnError, type TurnErrorKind } from "./turn_error.ts";
import type { TurnObserver } from "./turn_observer.ts";

function randomId(bytes = 12): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(bytes)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/**
 * The tool calls a delta's tool results answer, looked up backwards from the delta's start and
 * no further than the last user message (results follow their calls), so a lookup costs what it
 * reads, not the history.
 */
function callsBefore(messages: readonly Message[], end: number): DeltaHistory {
  return {
    toolCall(id) {
      for (let i = end - 1; i >= 0 && messages[i].role !== "user"; i--) {
        const m = messages[i];
        const call = m.role === "assistant" ? m.tool_calls?.find((c) => c.id === id) : undefined;
        if (call) return call;
      }
      return undefined;
    },
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

export class TurnRunner {
  /**
   * @param backend the default generation backend
   * @param backends named backends a rollout can choose (`CreateRollout.backend`)
   * @param pause holds new generations while a trainer syncs weights (`POST /api/pause`)
   * @param observer told when each turn starts and ends (metrics)
   */
  constructor(
    readonly model: PolicyModel,
    readonly backend: GenerationBackend,
    readonly backends: Readonly<Record<string, GenerationBackend>> = {},
    readonly pause: PauseGate = new PauseGate(),
    readonly observer?: TurnObserver,
  ) {}

  /** Turns registered and not yet recorded or failed. */
  readonly #inFlight = new Set<OpenTurn>();
  #idle: (() => void)[] = [];
  /** Set by `close`: why new turns are refused. */
  #closed: string | undefined;

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
      this.#aborts.get(open.turn)?.controller.abort();
      fail(open, new TurnError("shutting_down", reason));
    }
  }

  /** Registers a turn as in flight with `backend`; see {@link openTurn}. */
  #open(
    rollout: Rollout,
    req: CanonicalRequest,
    mount: Mount,
    idSuffix: string,
    backend: string,
  ): OpenTurn {
    const open = openTurn(rollout, req, mount, idSuffix, (error) => {
      this.#inFlight.delete(open);
      this.observer?.turnEnded({
        backend,
        turn: open.turn,
        addedMs: performance.now() - open.startedAt - open.backendMs,
        ...(error === undefined ? {} : { error }),
      });
      if (this.#inFlight.size === 0) { for (const resolve of this.#idle.splice(0)) resolve(); }
    });
    this.#inFlight.add(open);
    this.observer?.turnStarted(backend);
    return open;
  }

  #refuseWhenClosed(open: OpenTurn): void {
    if (this.#closed !== undefined) throw refuse(open, "shutting_down", this.#closed);
  }

  /** The backend serving a rollout. */
  backendFor(rollout: Rollout): GenerationBackend {
    return (rollout.backend && this.backends[rollout.backend]) || this.backend;
  }

  /**
   * Counts a client waiting on `turn`; when every waiter's connection is gone while the turn is
   * still generating, the generation is aborted (engines free the slot; the gate keeps the
   * request, since the trainer may already be working on it and a retry re-attaches).
   */
  watch(turn: Turn, clientSignal: AbortSignal | undefined): void {
    const abort = this.#aborts.get(turn);
    if (!clientSignal || !abort || turn.status !== "pending") return;
    abort.waiters++;
    clientSignal.addEventListener("abort", () => {
      if (--abort.waiters === 0 && turn.status === "pending") abort.controller.abort();
    }, { once: true });
  }

  readonly #aborts = new WeakMap<Turn, { controller: AbortController; waiters: number }>();

  /**
   * Registers the turn synchronously (so a concurrent retry finds it), then renders. Throws a
   * {@link TurnError} for requests that cannot become a turn (finished rollout, template error,
   * prompt longer than the context). Generation continues in the background; `turn.header` is
   * set once this resolves, and `turn.result` settles with the answer.
   */
  async start(rollout: Rollout, req: CanonicalRequest, toolCallIdPrefix: string): Promise<Turn> {
    requireActive(rollout);
    requireMessages(req);
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    if (mount.retryOf) {
      mount.retryOf.retries++;
      return mount.retryOf;
    }
    const open = this.#open(rollout, req, mount, randomId(4), this.backendFor(rollout).name);
    this.#refuseWhenClosed(open);
    const { turn } = open;
    turn.live = new LiveAnswer();

    let plan: PromptPlan;
    try {
      plan = await this.#planPrompt(mount, req, rollout.splitSpecialTokens);
    } catch (e) {
      throw refuse(
        open,
        "render_failed",
        `cannot render the conversation: ${(e as Error).message}`,
      );
    }
    Object.assign(turn, plan);
    turn.timings.rendered = Date.now();
    const room = this.model.contextLength - turn.promptLength;
    if (room <= 0) {
      throw refuse(
        open,
        "context_exceeded",
        `prompt is ${turn.promptLength} tokens; the model's context is ${this.model.contextLength}`,
      );
    }
    turn.maxTokens = Math.min(req.sampling.max_tokens ?? rollout.sampling.max_tokens ?? room, room);
    turn.header = {
      id: answerId(turn),
      model: req.model,
      created: Math.floor(Date.now() / 1000),
      inputTokens: turn.promptLength,
      cachedTokens: turn.promptLength - plan.bridgeIds.length - plan.deltaIds.length,
    };

    const controller = new AbortController();
    this.#aborts.set(turn, { controller, waiters: 0 });
    this.#generate(open, req, toolCallIdPrefix, controller.signal)
      .then((answer) => record(open, answer))
      .catch((e) => fail(open, e));
    return turn;
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
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    const open = this.#open(rollout, req, mount, "bb", rollout.backend ?? "black-box");
    this.#refuseWhenClosed(open);
    const { turn } = open;
    turn.blackBox = true;
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
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    const recorded = mount.retryOf;
    if (recorded && recorded.status === "done") return recorded.promptLength;
    return (await this.#planPrompt(mount, req, rollout.splitSpecialTokens)).promptLength;
  }

  async #planPrompt(
    mount: Mount,
    req: CanonicalRequest,
    splitSpecialTokens: boolean,
  ): Promise<PromptPlan> {
    const base = mount.base;
    const options = { splitSpecialTokens };
    if (!base) {
      const rendered = await this.model.renderFull(req.messages, req.tools, true, options);
      return {
        bridgeIds: [],
        deltaIds: rendered.ids,
        promptLength: rendered.ids.length,
        renderedMessages: req.messages.length,
        toolSpans: this.#toolSpans(rendered, req.messages, 0),
        specialText: rendered.specialText,
      };
    }
    const newMessages = req.messages.slice(mount.baseDepth);
    const rendered = await this.model.renderDeltaIds(
      newMessages,
      req.tools,
      options,
      callsBefore(req.messages, mount.baseDepth),
    );
    const bridgeIds = await this.model.turnEnd.bridge(base.outputIds);
    // Positions in the whole prompt: after the base's prompt, its output and the bridge.
    const offset = base.promptLength + base.outputIds.length + bridgeIds.length;
    return {
      bridgeIds,
      deltaIds: rendered.ids,
      promptLength: offset + rendered.ids.length,
      renderedMessages: newMessages.length,
      toolSpans: this.#toolSpans(rendered, newMessages, bridgeIds.length),
      specialText: rendered.specialText.map((hit) => ({
        ...hit,
        message: hit.message + mount.baseDepth,
        position: hit.position === null ? null : hit.position + offset,
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
    req: CanonicalRequest,
    toolCallIdPrefix: string,
    signal: AbortSignal,
  ): Promise<TurnAnswer> {
    const { rollout, turn } = open;
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
    const completion = await this.backendFor(rollout).generate({
      requestId: `req_${randomId()}`,
      rolloutId: rollout.id,
      turnId: turn.id,
      promptIds: promptIds(turn),
      sampling: {
        max_tokens: turn.maxTokens,
        temperature: req.sampling.temperature ?? rollout.sampling.temperature,
        top_p: req.sampling.top_p ?? rollout.sampling.top_p,
        stop_token_ids: this.model.stopTokenIds,
      },
      routingKey: rollout.id,
      onTokens,
      signal,
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
      req.tools,
    );
    turn.outputIds = completion.output_ids;
    turn.logprobs = completion.logprobs ?? null;
    turn.finishReason = completion.finish_reason;
    turn.weightVersion = completion.weight_version;
    turn.malformedToolCalls = parsed.malformedToolCalls;
    if (completion.finish_reason === "stop") {
      // An output that stopped without its end id gets it bridged (untrained) in the next
      // prompt; that is not drift.
      turn.drift = findDrift(
        await this.model.renderAnswerIds(parsed.message),
        await this.model.turnEnd.completed(completion.output_ids),
      );
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

/** A registered turn and how to settle it. */
interface OpenTurn {
  rollout: Rollout;
  turn: Turn;
  promptNode: MessageNode;
  settle: { resolve(a: TurnAnswer): void; reject(e: unknown): void };
  /** Called once, when the turn is recorded (no error) or failed. */
  ended(error?: unknown): void;
  /** `performance.now()` when the turn was registered. */
  startedAt: number;
  /** Milliseconds spent waiting for the backend (a pause hold included) so far. */
  backendMs: number;
}

function requireActive(rollout: Rollout): void {
  if (rollout.status !== "active") {
    throw new TurnError(
      "rollout_finished",
      `rollout ${rollout.id} is finished and takes no more turns`,
    );
  }
}

/** Registers a pending turn for a request mounted at `mount` (synchronously). */
function openTurn(
  rollout: Rollout,
  req: CanonicalRequest,
  mount: Mount,
  idSuffix: string,
  ended: OpenTurn["ended"],
): OpenTurn {
  let settle!: OpenTurn["settle"];
  const result = new Promise<TurnAnswer>((resolve, reject) => settle = { resolve, reject });
  result.catch(() => {}); // nobody may be listening any more (client gone)
  const { turn, promptNode } = registerTurn(rollout, req, mount, result, idSuffix);
  return { rollout, turn, promptNode, settle, ended, startedAt: performance.now(), backendMs: 0 };
}

/**
 * The one way a turn is recorded, for every backend: its answer hangs in the message tree, its
 * sub-agent calls open, and its waiters get the answer.
 */
function record(open: OpenTurn, answer: TurnAnswer): void {
  const { rollout, turn, promptNode, settle } = open;
  // A turn failed meanwhile (abandoned at shutdown) stays failed.
  if (turn.status !== "pending") return;
  turn.message = answer.message;
  turn.answer = answer;
  turn.status = "done";
  turn.timings.completed = Date.now();
  rollout.tree.recordAnswer(promptNode, turn);
  openAgentCalls(rollout, turn, answer.message);
  turn.live?.close();
  settle.resolve(answer);
  open.ended();
}

/** Fails a turn; `error` is also what its waiters get. */
function fail(open: OpenTurn, error: unknown): void {
  const { turn, settle } = open;
  if (turn.status !== "pending") return;
  turn.live?.close();
  turn.status = "failed";
  turn.error = (error as Error)?.message ?? String(error);
  turn.timings.completed = Date.now();
  settle.reject(error);
  open.ended(error);
}

/** Fails a turn that cannot be generated, with the error its request gets too. */
function refuse(open: OpenTurn, kind: TurnErrorKind, message: string): TurnError {
  const error = new TurnError(kind, message);
  fail(open, error);
  return error;
}
