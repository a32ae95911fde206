/**
 * A turn end to end, minus HTTP: mount the history in the rollout's tree, build the prompt ids
 * (the mounted turn's exact ids + the rendered delta, or a full render for a new chain), have the
 * backend generate, parse, record. A client retry of a recorded (or still pending) turn gets that
 * same turn back instead of a second one. Black-box turns (a hosted API answered) are registered
 * and recorded by the same code, at the message level.
 *
 * The runner keeps the entry points (`start`, `startBlackBox`, `countTokens`, and `resume` for a
 * turn restored from the journal) and generation; the prompt is planned by `prompt_plan.ts`, the
 * turns in flight are counted and bounded by `turn_flight.ts`, and every change to a turn is
 * recorded by `turn_record.ts`.
 *
 * @module
 */
import {
  type GenerationBackend,
  GenerationError,
  PauseGate,
  type SamplingRequest,
} from "../../generation/mod.ts";
import type { CanonicalRequest, TurnAnswer } from "../../canonical/mod.ts";
import type { PolicyModel } from "../../model/mod.ts";
import type { Rollout } from "../rollout.ts";
import { answerId, promptBaseOf, promptIds, type Turn, turnAnswer } from "../turn.ts";
import { rowsFromFor, rowsLikeFor } from "../token_rows/mod.ts";
import { type KnownHistory, type Mount, TurnTree } from "../tree/mod.ts";
import { answerDrift } from "./drift.ts";
import { LiveAnswer } from "../live_answer.ts";
import { TurnError } from "../turn_error.ts";
import {
  type BlackBoxAnswer,
  fail,
  type OpenOptions,
  type OpenTurn,
  openTurn,
  record,
  recordOutput,
  refuse,
} from "./turn_record.ts";
import { JournalWriter, turnPlanned, turnRetried } from "../journaling/mod.ts";
import { promptWork } from "./prompt_plan.ts";
import { planFor, planTurn } from "./plan_turn.ts";
import { requireActive, requireMessages, TurnFlight } from "./turn_flight.ts";
import { requireImagesShown, storeImages } from "./turn_images.ts";
import { randomHex } from "../random_hex.ts";
import {
  DEFAULT_ABANDON_GRACE_MS,
  DEFAULT_TURN_TIMEOUT_MS,
  type TurnRunnerOptions,
} from "./turn_runner_options.ts";
export type { TurnRunnerOptions } from "./turn_runner_options.ts";

export class TurnRunner {
  readonly pause: PauseGate;
  readonly turnTimeoutMs: number;
  readonly abandonGraceMs: number;
  readonly #writer: JournalWriter;
  readonly #flight: TurnFlight;
  readonly #onRecorded?: (rollout: Rollout, turn: Turn) => void;
  /** Pending turns by the request id their backend got. */
  readonly #byRequest = new Map<string, Turn>();

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
    this.#writer = options.writer ?? new JournalWriter();
    this.#flight = options.flight ?? new TurnFlight(options.limits, options.observer);
    this.#onRecorded = options.onRecorded;
  }

  /** The pending turn a backend request belongs to (a trainer's completion awaits its record). */
  turnOfRequest(requestId: string): Turn | undefined {
    return this.#byRequest.get(requestId);
  }

  /** Turns waiting for their answer (of one rollout, or of all). */
  pendingTurns(rolloutId?: string): number {
    return this.#flight.pending(rolloutId);
  }

  /** Fails every turn still in flight with `reason` (a shutdown whose grace period ran out). */
  abandon(reason: string): void {
    for (const open of this.#flight.open()) {
      // The trainer's request is withdrawn with the reason; the agent gets a retryable 503.
      this.#aborts.get(open.turn)?.controller.abort(new GenerationError("cancelled", reason));
      fail(open, new TurnError("shutting_down", reason));
    }
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
  async start(
    rollout: Rollout,
    req: CanonicalRequest,
    toolCallIdPrefix: string,
    known?: KnownHistory,
  ): Promise<Turn> {
    requireActive(rollout);
    requireMessages(req);
    this.#flight.requireHistoryLimit(req);
    requireImagesShown(this.model, req);
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session, known);
    if (mount.retryOf) {
      mount.retryOf.retries++;
      this.#writer.record(turnRetried(mount.retryOf));
      return mount.retryOf;
    }
    this.#writer.refuseIfFailed();
    this.#flight.admit(rollout);
    const open = this.#open(rollout, req, mount, { idSuffix: randomHex(4), toolCallIdPrefix });
    this.#flight.refuseWhenClosed(open);
    const { turn } = open;
    turn.live = new LiveAnswer();

    const work = promptWork(mount, req, rollout.splitSpecialTokens, this.model.rendersInFull);
    const { model } = req;
    const sampling: SamplingRequest = {
      max_tokens: 0,
      temperature: req.sampling.temperature ?? rollout.sampling.temperature,
      top_p: req.sampling.top_p ?? rollout.sampling.top_p,
      top_k: rollout.sampling.top_k,
      stop_token_ids: this.model.stopTokenIds,
    };
    const maxTokens = req.sampling.max_tokens ?? rollout.sampling.max_tokens;
    const stored = storeImages(this.#writer.images, req.images); // while the prompt renders
    // From here on nothing reads `req`: its parsed history is garbage while the prompt renders.
    const plan = await planTurn(open, await this.modelFor(rollout), work, stored);
    const { bridgeIds, deltaIds } = plan;
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
    const requestId = `req_${randomHex(12)}`;
    this.#writer.record(turnPlanned(turn, plan, requestId, sampling));
    this.resume(open, requestId, sampling, toolCallIdPrefix);
    return turn;
  }

  /**
   * Generates a registered, planned turn and records the answer (or the failure), in the
   * background, under the turn timeout. A restored pending turn starts here again, with its
   * request id.
   */
  resume(
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
      .then((answer) => {
        record(open, answer);
        if (turn.status === "done") this.#onRecorded?.(open.rollout, turn);
      })
      .catch((e) => fail(open, e))
      .finally(() => {
        clearTimeout(deadline);
        clearTimeout(this.#aborts.get(turn)?.grace);
        // The controller (and whatever listens to its signal) must not live as long as the turn.
        this.#aborts.delete(turn);
        turn.result.finally(() => this.#byRequest.delete(requestId)).catch(() => {});
      });
  }

  /** Registers a turn and tracks it in flight until it settles. */
  #open(
    rollout: Rollout,
    req: CanonicalRequest,
    mount: Mount,
    o: OpenOptions,
  ): OpenTurn {
    const backend = o.blackBox ? rollout.backend ?? "black-box" : this.backendFor(rollout).name;
    return this.#flight.track(openTurn(rollout, req, mount, this.#writer, o), backend);
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
    this.#flight.requireHistoryLimit(req);
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    this.#writer.refuseIfFailed();
    this.#flight.admit(rollout);
    const open = this.#open(rollout, req, mount, {
      idSuffix: "bb",
      toolCallIdPrefix: "",
      blackBox: true,
    });
    this.#flight.refuseWhenClosed(open);
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
    this.#flight.requireHistoryLimit(req);
    requireImagesShown(this.model, req);
    const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req), req.session);
    const recorded = mount.retryOf;
    if (recorded && recorded.status === "done") return recorded.promptLength;
    const work = promptWork(mount, req, rollout.splitSpecialTokens, this.model.rendersInFull);
    return (await planFor(await this.modelFor(rollout), work)).promptLength;
  }

  /** The rollout's model: the gateway's, or bound with `Rollout.template` (checked at create). */
  modelFor(rollout: Rollout): Promise<PolicyModel> {
    if (!rollout.hasTemplate) return Promise.resolve(this.model);
    let model = this.#models.get(rollout);
    if (!model) this.#models.set(rollout, model = this.model.withTemplate(rollout.template));
    return model;
  }

  readonly #models = new WeakMap<Rollout, Promise<PolicyModel>>();

  async #generate(
    open: OpenTurn,
    requestId: string,
    sampling: SamplingRequest,
    toolCallIdPrefix: string,
    signal: AbortSignal,
  ): Promise<TurnAnswer> {
    const { rollout, turn } = open;
    const model = await this.modelFor(rollout);
    // Nothing reaches a backend before the journal has the turn and its prompt.
    await this.#writer.durable();
    const asked = performance.now();
    const release = await this.pause.enter(signal).finally(() =>
      open.backendMs = performance.now() - asked
    );
    // The version in force as the request goes out: what its first id is sampled under unless
    // the backend knows better.
    const sentVersion = this.pause.version;
    const live = turn.live!;
    // Streamed ids go through the streaming parser in order; the complete parse below is the truth.
    const stream = model.streamingParser();
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
      promptBase: promptBaseOf(turn),
    }).finally(() => {
      release();
      open.backendMs = performance.now() - asked;
    });
    await parsing;
    // Abandoned meanwhile (a shutdown's grace period ran out): a late answer is not recorded.
    if (turn.status !== "pending") throw new TurnError("shutting_down", turn.error ?? "abandoned");
    const parsed = await model.parse(
      completion.output_ids,
      () => toolCallIdPrefix + randomHex(12),
      turn.tools,
      { promptIds: promptIds(turn) },
    );
    recordOutput(open, completion, sampling, rowsFrom, sentVersion);
    turn.malformedToolCalls = parsed.malformedToolCalls;
    if (completion.finish_reason === "stop") {
      // An output that stopped without its end id gets it bridged (untrained) in the next
      // prompt; that is not drift.
      turn.drift = await answerDrift(model, parsed.message, completion.output_ids);
    }
    return turnAnswer(turn.header!, parsed, completion);
  }
}
