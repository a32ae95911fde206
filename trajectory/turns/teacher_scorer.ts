/**
 * Teacher scoring off the turn's path (on-policy distillation). Once a turn of a rollout that has
 * a teacher is recorded (its agent already has its answer), the turn waits here to be scored: the
 * teacher is sent the turn's sequence exactly as the student saw it (its prompt ids, then its
 * sampled ids) and asked for its logprob of each sampled id. A scoring covers every turn of the
 * sequence's path still without a score (those queued behind it, and earlier ones a teacher
 * outage left unscored), so a busy or recovering teacher costs one prefill for several turns.
 * Each rollout has one scoring at a time; each teacher at most its `concurrency`.
 *
 * A scoring that fails is tried again (`attempts`, with a backoff that doubles); after the last
 * it is given up: each turn it covered records why (`teacher_failed`) and its sample names those
 * positions as missing; a later scoring of the same path may still fill them. Nothing is ever
 * made up. Scores and failures are journaled (`teacher_scored`, `teacher_failed`) and restored;
 * a restored rollout's recorded turns without either are queued again (as are those a shutdown
 * dropped). Finishing a rollout waits for its scorings, at most `settleMs`.
 *
 * @module
 */
import { type Teacher, teacherName, type Teachers } from "../../generation/mod.ts";
import type { Rollout } from "../rollout.ts";
import type { Turn } from "../turn.ts";
import { type JournalWriter, teacherFailed, teacherScored } from "../journaling/mod.ts";
import { randomHex } from "../random_hex.ts";

export interface TeacherScorerOptions {
  teachers: Teachers;
  writer: JournalWriter;
  /** Tries of one scoring before its turns are given up (default 3). */
  attempts?: number;
  /** The wait before the second try; doubles per try (default 1 s). */
  backoffMs?: number;
  /** How long finishing a rollout waits for its scorings (default 120 s). */
  settleMs?: number;
}

/** Tries of a teacher scoring, the backoff between them, how long finish waits for scorings. */
export type TeacherScoring = Omit<TeacherScorerOptions, "teachers" | "writer">;

interface Work {
  /** Recorded turns waiting for a scoring. */
  queued: Set<Turn>;
  running?: Promise<void>;
  /** Aborted when the rollout is deleted. */
  controller: AbortController;
  idle: (() => void)[];
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

export class TeacherScorer {
  readonly #work = new Map<Rollout, Work>();
  /** Scorings in flight per teacher, and those waiting for a slot. */
  readonly #slots = new Map<string, { busy: number; waiting: (() => void)[] }>();
  readonly attempts: number;
  readonly backoffMs: number;
  readonly settleMs: number;
  #stopped = false;

  constructor(readonly o: TeacherScorerOptions) {
    this.attempts = Math.max(1, o.attempts ?? 3);
    this.backoffMs = o.backoffMs ?? 1000;
    this.settleMs = o.settleMs ?? 120_000;
  }

  /** A turn of `rollout` was recorded: score it when the rollout has a teacher. */
  recorded(rollout: Rollout, turn: Turn): void {
    if (this.#stopped || !rollout.teacher || turn.blackBox || turn.outputIds.length === 0) return;
    this.#workOf(rollout).queued.add(turn);
    this.#pump(rollout);
  }

  /** A restored rollout: its recorded turns without a scoring or a failure are queued again. */
  resume(rollout: Rollout): void {
    for (const t of rollout.turns) {
      if (t.status === "done" && !rollout.teacherScores?.has(t.id)) this.recorded(rollout, t);
    }
  }

  /** Resolves once the rollout's scorings are done, or after `settleMs`. */
  async settled(rollout: Rollout): Promise<void> {
    const work = this.#work.get(rollout);
    if (!work) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      new Promise<void>((resolve) => work.idle.push(resolve)),
      new Promise<void>((resolve) => timer = setTimeout(resolve, this.settleMs)),
    ]);
    clearTimeout(timer);
  }

  /**
   * The gateway shuts down: no scoring starts, those under way are dropped unjournaled (a
   * restart queues their turns again).
   */
  stop(): void {
    this.#stopped = true;
    for (const rollout of [...this.#work.keys()]) this.forget(rollout);
  }

  /** A deleted rollout: its scorings stop. */
  forget(rollout: Rollout): void {
    const work = this.#work.get(rollout);
    if (!work) return;
    work.controller.abort();
    work.queued.clear();
    this.#work.delete(rollout);
    for (const wake of work.idle.splice(0)) wake();
  }

  #workOf(rollout: Rollout): Work {
    let work = this.#work.get(rollout);
    if (!work) {
      work = { queued: new Set(), controller: new AbortController(), idle: [] };
      this.#work.set(rollout, work);
    }
    return work;
  }

  #pump(rollout: Rollout): void {
    const work = this.#work.get(rollout);
    if (!work || work.running) return;
    if (work.queued.size === 0) {
      this.#work.delete(rollout);
      for (const wake of work.idle.splice(0)) wake();
      return;
    }
    // A task of its own: nothing of a scoring runs in the call that recorded the turn.
    work.running = new Promise<void>((resolve) => setTimeout(resolve, 0))
      .then(() => this.#scoreNext(rollout, work))
      .catch((e) => console.error(`rollgate: teacher scoring of ${rollout.id} failed:`, e))
      .finally(() => {
        work.running = undefined;
        this.#pump(rollout);
      });
  }

  /** Scores the newest queued turn's sequence, covering every turn of its path without a score. */
  async #scoreNext(rollout: Rollout, work: Work): Promise<void> {
    let newest: Turn | undefined;
    for (const t of work.queued) if (!newest || t.ids.outputEnd > newest.ids.outputEnd) newest = t;
    const cover: Turn[] = [];
    for (let t: Turn | null = newest!; t; t = t.parent) {
      if (t.status !== "done" || t.outputIds.length === 0) continue;
      const score = rollout.teacherScores?.get(t.id);
      if (!score || "error" in score) cover.unshift(t);
    }
    for (const t of cover) work.queued.delete(t);
    work.queued.delete(newest!);
    if (cover.length === 0) return;
    const spec = rollout.teacher!;
    const name = teacherName(spec);
    let teacher: Teacher;
    try {
      teacher = this.o.teachers.get(spec);
    } catch (e) {
      return this.#giveUp(rollout, cover, name, (e as Error).message);
    }
    const ids = newest!.ids.line.view(0, newest!.ids.outputEnd);
    const positions = cover.map((t): [number, number] => [t.ids.outputStart, t.ids.outputEnd]);
    const signal = work.controller.signal;
    let error = "";
    for (let attempt = 0; attempt < this.attempts; attempt++) {
      if (attempt > 0) await sleep(this.backoffMs * 2 ** (attempt - 1), signal);
      if (signal.aborted) return;
      const release = await this.#slot(teacher);
      try {
        const logprobs = await teacher.score({
          requestId: `tch_${randomHex(12)}`,
          rolloutId: rollout.id,
          turnIds: cover.map((t) => t.id),
          ids,
          positions,
          signal,
        });
        if (signal.aborted) return;
        let at = 0;
        for (const t of cover) {
          const own = logprobs.slice(at, at += t.outputIds.length);
          (rollout.teacherScores ??= new Map()).set(t.id, { logprobs: own });
          this.o.writer.record(teacherScored(t, name, own));
        }
        return;
      } catch (e) {
        error = (e as Error).message;
      } finally {
        release();
      }
    }
    if (!signal.aborted) {
      this.#giveUp(rollout, cover, name, `${error} (gave up after ${this.attempts} tries)`);
    }
  }

  #giveUp(rollout: Rollout, cover: readonly Turn[], name: string, error: string): void {
    for (const t of cover) {
      (rollout.teacherScores ??= new Map()).set(t.id, { error });
      this.o.writer.record(teacherFailed(t, name, error));
    }
  }

  /** Waits for one of the teacher's slots; resolves with its release. */
  async #slot(teacher: Teacher): Promise<() => void> {
    let slots = this.#slots.get(teacher.name);
    if (!slots) this.#slots.set(teacher.name, slots = { busy: 0, waiting: [] });
    const s = slots;
    while (teacher.concurrency !== undefined && s.busy >= teacher.concurrency) {
      await new Promise<void>((resolve) => s.waiting.push(resolve));
    }
    s.busy++;
    return () => {
      s.busy--;
      s.waiting.shift()?.();
    };
  }
}
