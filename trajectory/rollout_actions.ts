/**
 * Every change a caller can make to a rollout, in one place: create, finish, delete, expire the
 * idle ones, a trainer's complete / fail / append of a request, a host-side tool call, the agent's
 * exit, and a turn (start, black-box, count tokens). Each applies the change, journals it and
 * resolves once it is durable, so whoever answers a client after awaiting it has nothing to lose in
 * a crash. Reading goes through it too: it is the only door to the store, the turn runner and the
 * gate, which it keeps to itself; the journal writer and its events stay inside `trajectory/`.
 *
 * The durable store behind it is a {@link Journal} (the SQLite one of `journal/`, or any other
 * implementation, such as a store shared by several replicas); without one nothing is kept.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RolloutActions } from "./mod.ts";
 * import { PolicyModel } from "../model/mod.ts";
 *
 * const rollouts = new RolloutActions({ model: await PolicyModel.load() });
 * const r = await rollouts.create({ metadata: { task: "demo" } });
 * await rollouts.agentExit(r, { exit_code: 0, reason: "done" });
 * const samples = await rollouts.finish(r, 1);
 * assert.equal(r.status, "finished");
 * assert.deepEqual(samples, []); // no turns, no samples
 * await rollouts.delete(r);
 * assert.equal(rollouts.get(r.id), undefined);
 * ```
 *
 * @module
 */
import {
  type CompleteResult,
  type GateCompletion,
  type GateStats,
  InterceptionGate,
  type Lease,
  type PauseStatus,
  type PendingRequest,
  type RequestQueue,
  Teachers,
} from "../generation/mod.ts";
import type { CanonicalRequest } from "../canonical/mod.ts";
import type { AgentExit, HostCall, Rollout } from "./rollout.ts";
import { type CreateRollout, RolloutStore } from "./rollout_store.ts";
import { MemorySampleLog, type Sample, type SampleLog, type SampleOptions } from "./samples/mod.ts";
import {
  agentExit,
  hostCall,
  type Journal,
  type JournalError,
  JournalWriter,
  rolloutCreated,
  rolloutFinished,
  turnReward,
} from "./journaling/mod.ts";
import {
  answeredWithImages,
  type BlackBoxAnswer,
  TeacherScorer,
  TurnFlight,
  TurnRunner,
} from "./turns/mod.ts";
import type { Turn } from "./turn.ts";
import { adoptRollout, restore, type RestoreReport } from "./restore.ts";
import { setTurnReward, type TurnRewarded } from "./turn_rewards.ts";
import type { RolloutActionsOptions } from "./rollout_actions_options.ts";

export type { RolloutActionsOptions } from "./rollout_actions_options.ts";

export class RolloutActions {
  /** The rollouts in memory (read them with `get`, `list`; change them through the methods). */
  readonly #store: RolloutStore;
  readonly #runner: TurnRunner;
  /** Where trainers take requests from (`next`, `ack`, `complete` …). */
  readonly #gate: RequestQueue;
  readonly teachers: Teachers;
  readonly scorer: TeacherScorer;
  readonly sampleLog: SampleLog;
  readonly #journal?: Journal;
  readonly #writer: JournalWriter;
  /** The writers of adopted rollouts' resumed turns (`adopt`): `durable` waits for them too. */
  readonly #adopted = new Set<JournalWriter>();
  readonly #flight: TurnFlight;
  readonly #onSamples = new Set<() => void>();
  readonly #onEnded = new Set<(rollout: Rollout) => void>();

  constructor(o: RolloutActionsOptions) {
    this.#journal = o.journal;
    this.#writer = new JournalWriter(o.journal, o.images ?? o.journal);
    this.#store = new RolloutStore({ idleTimeoutMs: o.idleTimeoutMs, rows: this.#writer.rows });
    this.sampleLog = o.sampleLog ?? o.journal ?? new MemorySampleLog();
    this.#gate = o.gate ?? new InterceptionGate();
    this.#flight = new TurnFlight(o.turns?.limits, o.turns?.observer);
    this.teachers = o.teachers ?? new Teachers();
    this.scorer = new TeacherScorer({
      ...o.teacherScoring,
      teachers: this.teachers,
      writer: this.#writer,
    });
    this.#runner = new TurnRunner(o.model, o.backend ?? this.#gate, o.backends, {
      ...o.turns,
      writer: this.#writer,
      flight: this.#flight,
      onRecorded: (rollout, turn) => this.scorer.recorded(rollout, turn),
    });
  }

  // Reading.

  get(id: string): Rollout | undefined {
    return this.#store.get(id);
  }

  /** The rollout `id`, or an `UnknownRolloutError` saying whether it expired. */
  require(id: string): Rollout {
    return this.#store.require(id);
  }

  byToken(token: string): Rollout | undefined {
    return this.#store.byToken(token);
  }

  /** The bytes of an image a turn showed, by its hash; null when the store has none. */
  async readImage(hash: string): Promise<Uint8Array | null> {
    return await this.#writer.images?.readImage(hash) ?? null;
  }

  list(): Rollout[] {
    return this.#store.list();
  }

  // The trainer's queue of requests.

  /** The oldest unclaimed request (of `rollout` if given), waiting up to `waitMs`. */
  next(...args: Parameters<RequestQueue["next"]>): ReturnType<RequestQueue["next"]> {
    return this.#gate.next(...args);
  }

  /** Acknowledges (or renews) a request: it is the trainer's for the lease. */
  async ack(requestId: string, leaseMs?: number, version?: string | number): Promise<Lease> {
    return await this.#gate.ack(requestId, leaseMs, version);
  }

  /** A request's whole prompt for a trainer without the delta's base (null: none kept here). */
  async pendingRequest(requestId: string): Promise<PendingRequest | null> {
    return this.#gate.pendingRequest ? await this.#gate.pendingRequest(requestId) : null;
  }

  /** Requests not yet resolved (of one rollout, or of all). */
  async pendingRequests(rollout?: string): Promise<number> {
    return await this.#gate.pendingCount(rollout);
  }
  /** Where the trainer's requests stand (`/api/status`). */
  async requestStats(): Promise<GateStats> {
    return await this.#gate.stats();
  }

  /** Whether a turn waits for `requestId` (from its start, or its relaunch, until it settles). */
  awaits(requestId: string): boolean {
    return this.#runner.turnOfRequest(requestId) !== undefined;
  }

  // The pause (weight syncs): new generations are held while it is on.

  pauseStatus(): PauseStatus {
    return this.#runner.pause.status();
  }

  /** Holds new generations back (idempotent). */
  pause(): void {
    if (!this.#runner.pause.paused) this.#runner.pause.pause();
  }

  /** Lets held generations go (idempotent); `version`: the weights now in force, if named. */
  resume(version?: string | number): void {
    if (this.#runner.pause.paused || version !== undefined) this.#runner.pause.resume(version);
  }

  /** Calls `wake` whenever samples were logged. */
  onSamples(wake: () => void): () => void {
    this.#onSamples.add(wake);
    return () => this.#onSamples.delete(wake);
  }

  /** Calls `ended` with every rollout that takes no more turns (finished, deleted, expired). */
  onEnded(ended: (rollout: Rollout) => void): void {
    this.#onEnded.add(ended);
  }

  /** Wakes the `onSamples` subscribers (also for samples another replica logged). */
  samplesLogged(): void {
    for (const wake of this.#onSamples) wake();
  }

  // Rollouts.

  /** A new rollout, durable when this resolves; its teacher named, else the default one. */
  async create(spec: CreateRollout = {}): Promise<Rollout> {
    const chosen = { ...spec, teacher: this.teachers.choose(spec.teacher) ?? undefined };
    const rollout = this.#store.create(chosen);
    this.#writer.record(rolloutCreated(rollout, chosen));
    await this.#writer.durable();
    return rollout;
  }

  /**
   * Ends a rollout with its reward and logs its samples (journaled together, before this
   * resolves); `/api/samples/stream` subscribers are woken, the gate's requests withdrawn.
   * `version`: the trainer's weight version now, what staleness is measured against (default:
   * the newest version its turns saw).
   */
  async finish(
    rollout: Rollout,
    reward: number | null,
    defaults?: Partial<SampleOptions>,
    version: number | null = null,
  ): Promise<Sample[]> {
    // Its recorded turns' teacher scorings first (bounded: what is still scoring is named).
    await this.scorer.settled(rollout);
    rollout.finish(reward, version);
    const samples = rollout.samples(defaults);
    const event = rolloutFinished(rollout);
    if (this.#journal && this.sampleLog === this.#journal) {
      await this.#writer.finish(event, samples);
    } else {
      this.#writer.record(event);
      await this.#writer.durable();
      await this.sampleLog.append(samples);
    }
    this.samplesLogged();
    this.#ended(rollout, "was finished");
    this.#flight.observer?.rolloutFinished?.(rollout);
    return samples;
  }

  /** Drops a rollout, from the journal too (samples already logged stay). */
  async delete(rollout: Rollout): Promise<void> {
    this.#ended(rollout, "was deleted");
    this.scorer.forget(rollout);
    if (this.#store.delete(rollout.id)) this.#writer.forget(rollout.id);
    await this.#writer.durable();
  }

  /**
   * Expires idle rollouts whose turns all settled, their gate requests withdrawn; not awaited (a
   * restore expires them by the same idle rule if the mark is lost).
   */
  sweep(now = Date.now()): Rollout[] {
    const expired = this.#store.sweep((r) => this.#flight.pending(r.id) > 0, now);
    for (const r of expired) {
      this.#ended(r, "expired");
      this.#writer.expire(r.id);
    }
    return expired;
  }

  /** A rollout ended: its gate requests are withdrawn, and `onEnded` listeners told. */
  #ended(rollout: Rollout, how: string): void {
    this.#gate.cancelRollout(rollout.id, `rollout ${rollout.id} ${how}`);
    this.#onEnded.forEach((ended) => ended(rollout));
  }

  /**
   * Gives one recorded turn (by id, or index) its reward, durable when this resolves; the same
   * again changes nothing (`recorded: false`), another or an unrecorded turn is a `TurnRewardError`.
   */
  async rewardTurn(rollout: Rollout, ref: string, reward: number): Promise<TurnRewarded> {
    const result = setTurnReward(rollout, ref, reward);
    if (result.recorded) this.#writer.record(turnReward(result.turn, reward));
    // A repeat waits too: the first post may still be on its way to the disk.
    await this.#writer.durable();
    return result;
  }

  /** Records a host-side tool call the agent made (the tool already ran). */
  async hostCall(rollout: Rollout, call: HostCall): Promise<void> {
    rollout.hostCallBytes += call.bytes;
    rollout.hostCalls.push(call);
    this.#writer.record(hostCall(rollout, call));
    await this.#writer.durable();
  }

  /** Records the agent's exit signal. */
  async agentExit(rollout: Rollout, exit: Omit<AgentExit, "at">): Promise<void> {
    rollout.agentExit = { ...exit, at: Date.now() };
    this.#writer.record(agentExit(rollout, rollout.agentExit));
    await this.#writer.durable();
  }

  // Turns.

  /** Starts (or, for a client's retry, finds) a turn; see `TurnRunner.start`. */
  startTurn(...args: Parameters<TurnRunner["start"]>): Promise<Turn> {
    return this.#runner.start(...args);
  }

  /**
   * A turn a hosted API answers; see `TurnRunner.startBlackBox`. Its images are stored while the
   * API answers, and the answer is recorded once they are (else the turn fails).
   */
  startBlackBox(rollout: Rollout, req: CanonicalRequest, ask: () => Promise<BlackBoxAnswer>): Turn {
    const images = req.images;
    const answered = () => answeredWithImages(this.#writer.images, images, ask);
    return this.#runner.startBlackBox(rollout, req, answered);
  }

  /** The policy's prompt length for a request, recording nothing. */
  countTokens(rollout: Rollout, req: CanonicalRequest): Promise<number> {
    return this.#runner.countTokens(rollout, req);
  }

  /** Counts a client waiting on `turn` (its disconnect may withdraw the generation). */
  watch(turn: Turn, clientSignal: AbortSignal | undefined): void {
    this.#runner.watch(turn, clientSignal);
  }

  // A trainer's answers to the gate's requests.

  /** Appends streamed ids to a request (recorded when it completes), sampled under `version`. */
  async append(requestId: string, ids: number[], version?: string | number): Promise<void> {
    await this.#gate.append(requestId, ids, version);
  }

  /**
   * Completes a request (checked by the gate); resolves once its turn is recorded and durable.
   * `resent`: the same output was accepted before (sent again after a lost answer), no change.
   */
  async complete(requestId: string, completion: GateCompletion): Promise<CompleteResult> {
    const turn = this.#runner.turnOfRequest(requestId);
    const result = await this.#gate.complete(requestId, completion);
    await this.#settled(result === "completed" ? turn : undefined);
    return result;
  }

  /** Fails a request; resolves once its turn's failure is durable. */
  async fail(requestId: string, error: string, status?: number): Promise<void> {
    const turn = this.#runner.turnOfRequest(requestId);
    await this.#gate.fail(requestId, error, status);
    await this.#settled(turn);
  }

  async #settled(turn: Turn | undefined): Promise<void> {
    await turn?.result.catch(() => {});
    await this.durable();
  }

  // The gateway's life.

  /** Rebuilds the journaled rollouts and re-queues their requests; `null` without a journal. */
  async restore(now = Date.now()): Promise<RestoreReport | null> {
    if (!this.#journal) return null;
    return await restore(this.#journal, { ...this.#replay(this.#writer), store: this.#store }, now);
  }

  /** What a restore replays into besides its store: `writer`, this gateway's flight and runner. */
  #replay(writer: JournalWriter) {
    return { writer, flight: this.#flight, runner: this.#runner, scorer: this.scorer };
  }

  /** Restores rollout `id` from `journal` beside those in memory (see `adoptRollout`). */
  async adopt(journal: Journal, id: string, now = Date.now()): Promise<RestoreReport> {
    const writer = new JournalWriter(journal);
    this.#adopted.add(writer);
    return await adoptRollout(journal, id, this.#store, this.#replay(writer), now);
  }

  /** Resolves once every change so far is durable (throws the journal's failure if any). */
  async durable(): Promise<void> {
    await this.#writer.durable();
    for (const writer of this.#adopted) await writer.durable();
  }

  /** Why the journal stopped keeping changes, once a write failed. */
  get journalFailure(): JournalError | null {
    if (this.#writer.failure) return this.#writer.failure;
    for (const writer of this.#adopted) if (writer.failure) return writer.failure;
    return null;
  }

  /** Turns in flight, registered and not yet recorded or failed (of one rollout, or of all). */
  pendingTurns(rolloutId?: string): number {
    return this.#flight.pending(rolloutId);
  }

  /** Takes no new turns (`shutting_down`, `reason`; those in flight go on), stops teacher scoring. */
  close(reason: string): void {
    this.#flight.close(reason);
    this.scorer.stop();
  }

  /** Resolves once no turn is in flight. */
  whenIdle(): Promise<void> {
    return this.#flight.whenIdle();
  }

  /** Fails every turn still in flight with `reason` (a drain whose grace ran out). */
  abandon(reason: string): void {
    this.#runner.abandon(reason);
  }
}
