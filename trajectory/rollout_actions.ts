/**
 * Every change a caller can make to a rollout, in one place: create, finish, delete, expire the
 * idle ones, a trainer's complete / fail / append of a request, a host-side tool call, the agent's
 * exit, and a turn (start, black-box, count tokens). Each applies the change (to the store, the
 * runner, the gate), records it in the journal and resolves once it is durable, so whoever answers
 * a client after awaiting it has nothing to lose in a crash. The gateway and the CLI call this
 * and nothing below it; the journal writer and the journal events stay inside `trajectory/`.
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
  type GateCompletion,
  InterceptionGate,
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
  type BlackBoxAnswer,
  storeImages,
  TeacherScorer,
  TurnFlight,
  TurnRunner,
} from "./turns/mod.ts";
import type { Turn } from "./turn.ts";
import { restore, type RestoreReport } from "./restore.ts";
import type { RolloutActionsOptions } from "./rollout_actions_options.ts";
import { setTurnReward } from "./turn_rewards.ts";

export type { RolloutActionsOptions } from "./rollout_actions_options.ts";

export class RolloutActions {
  /** The rollouts in memory (read them here; change them through the methods below). */
  readonly store: RolloutStore;
  readonly runner: TurnRunner;
  readonly gate: RequestQueue;
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
    this.store = new RolloutStore({ idleTimeoutMs: o.idleTimeoutMs, rows: this.#writer.rows });
    this.sampleLog = o.sampleLog ?? o.journal ?? new MemorySampleLog();
    this.gate = o.gate ?? new InterceptionGate();
    this.#flight = new TurnFlight(o.turns?.limits, o.turns?.observer);
    this.teachers = o.teachers ?? new Teachers();
    this.scorer = new TeacherScorer({
      ...o.teacherScoring,
      teachers: this.teachers,
      writer: this.#writer,
    });
    this.runner = new TurnRunner(o.model, o.backend ?? this.gate, o.backends, {
      ...o.turns,
      writer: this.#writer,
      flight: this.#flight,
      onRecorded: (rollout, turn) => this.scorer.recorded(rollout, turn),
    });
  }

  // Reading.

  get(id: string): Rollout | undefined {
    return this.store.get(id);
  }

  /** The rollout `id`, or an `UnknownRolloutError` saying whether it expired. */
  require(id: string): Rollout {
    return this.store.require(id);
  }

  byToken(token: string): Rollout | undefined {
    return this.store.byToken(token);
  }

  /** The bytes of an image a turn showed, by its hash; null when the store has none. */
  async readImage(hash: string): Promise<Uint8Array | null> {
    return await this.#writer.images?.readImage(hash) ?? null;
  }

  list(): Rollout[] {
    return this.store.list();
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

  /**
   * A new rollout, durable when this resolves. Its teacher is the one it names, else the
   * gateway's default (an unknown name is an `UnknownTeacherError`, and nothing is created).
   */
  async create(spec: CreateRollout = {}): Promise<Rollout> {
    const chosen = { ...spec, teacher: this.teachers.choose(spec.teacher) ?? undefined };
    const rollout = this.store.create(chosen);
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
    this.gate.cancelRollout(rollout.id, `rollout ${rollout.id} was finished`);
    this.#flight.observer?.rolloutFinished?.(rollout);
    this.#onEnded.forEach((ended) => ended(rollout));
    return samples;
  }

  /** Drops a rollout, from the journal too (samples already logged stay). */
  async delete(rollout: Rollout): Promise<void> {
    this.gate.cancelRollout(rollout.id, `rollout ${rollout.id} was deleted`);
    this.scorer.forget(rollout);
    if (this.store.delete(rollout.id)) this.#writer.forget(rollout.id);
    this.#onEnded.forEach((ended) => ended(rollout));
    await this.#writer.durable();
  }

  /**
   * Expires rollouts idle for longer than the idle timeout whose turns all settled (at most once
   * per tenth of it: the gateway calls this on the way of other requests); their gate requests
   * are withdrawn. The only change not awaited: the request it rides on is not about these
   * rollouts, and a restore expires them by the same idle rule if the mark is lost.
   */
  sweep(now = Date.now()): Rollout[] {
    const expired = this.store.sweep((r) => this.#flight.pending(r.id) > 0, now);
    for (const r of expired) {
      this.gate.cancelRollout(r.id, `rollout ${r.id} expired`);
      this.#writer.expire(r.id);
      this.#onEnded.forEach((ended) => ended(r));
    }
    return expired;
  }

  /**
   * Gives one recorded turn (by id, or index) its reward, before or after finish; durable when
   * this resolves. Posting the same reward again changes nothing (`recorded: false`); another
   * reward for the same turn is a `TurnRewardError`, as is a turn that is not recorded.
   */
  async rewardTurn(
    rollout: Rollout,
    ref: string,
    reward: number,
  ): Promise<{ turn: Turn; recorded: boolean }> {
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
    return this.runner.start(...args);
  }

  /**
   * A turn a hosted API answers; see `TurnRunner.startBlackBox`. Its images are stored while the
   * API answers, and the answer is recorded once they are (else the turn fails).
   */
  startBlackBox(
    rollout: Rollout,
    req: CanonicalRequest,
    ask: () => Promise<BlackBoxAnswer>,
  ): Turn {
    const images = req.images;
    return this.runner.startBlackBox(rollout, req, async () => {
      const [answer, unstored] = await Promise.all([
        ask(),
        storeImages(this.#writer.images, images),
      ]);
      if (unstored) throw unstored;
      return answer;
    });
  }

  /** The policy's prompt length for a request, recording nothing. */
  countTokens(rollout: Rollout, req: CanonicalRequest): Promise<number> {
    return this.runner.countTokens(rollout, req);
  }

  /** Counts a client waiting on `turn` (its disconnect may withdraw the generation). */
  watch(turn: Turn, clientSignal: AbortSignal | undefined): void {
    this.runner.watch(turn, clientSignal);
  }

  // A trainer's answers to the gate's requests.

  /**
   * Appends streamed ids to a request (kept when it completes: nothing is recorded yet), sampled
   * under weight `version` when the trainer says.
   */
  async append(requestId: string, ids: number[], version?: string | number): Promise<void> {
    await this.gate.append(requestId, ids, version);
  }

  /**
   * Completes a request with a trainer's answer (its routing rows as the wire sends them: checked
   * by the gate); resolves once its turn is recorded and durable.
   */
  async complete(requestId: string, completion: GateCompletion): Promise<void> {
    const turn = this.runner.turnOfRequest(requestId);
    await this.gate.complete(requestId, completion);
    await this.#settled(turn);
  }

  /** Fails a request; resolves once its turn's failure is durable. */
  async fail(requestId: string, error: string, status?: number): Promise<void> {
    const turn = this.runner.turnOfRequest(requestId);
    await this.gate.fail(requestId, error, status);
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
    return await restore(this.#journal, this.#replay(this.store, this.#writer), now);
  }

  /** What a restore replays into: `store` and `writer`, with this gateway's flight and runner. */
  #replay(store: RolloutStore, writer: JournalWriter) {
    return { store, writer, flight: this.#flight, runner: this.runner, scorer: this.scorer };
  }

  /**
   * Restores rollout `id` from `journal` beside the rollouts in memory (a replica taking over
   * one whose owner is gone). The replay gets a store and a writer of its own, so switching
   * recording off while it runs cannot hide other rollouts' writes.
   */
  async adopt(journal: Journal, id: string, now = Date.now()): Promise<RestoreReport> {
    const scratch = new RolloutStore({ idleTimeoutMs: this.store.idleTimeoutMs });
    const writer = new JournalWriter(journal);
    this.#adopted.add(writer);
    const report = await restore(journal, this.#replay(scratch, writer), now);
    const rollout = scratch.get(id);
    if (rollout) this.store.add(rollout);
    else if (report.expired > 0) this.store.markExpired(id, now);
    return report;
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

  /** Turns in flight (registered, not yet recorded or failed). */
  get inFlight(): number {
    return this.#flight.pending();
  }

  /** Turns waiting for their answer (of one rollout, or of all). */
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
    this.runner.abandon(reason);
  }
}
