/**
 * Rebuilding the gateway's rollouts from the journal on start. Each rollout's events are replayed
 * in order through the same code that made them (`store.create`, `openTurn`, `record`, `fail`),
 * switching on the kind of each event (`journal_events.ts`),
 * so tokens, message trees, chains and labels come back exactly as they were. Turns that were
 * waiting for their answer get their request back in the queue under the same request id; a turn
 * the crash caught before its prompt was built fails, so the agent's retry takes its place.
 * Rollouts idle for longer than the idle timeout stay in the journal, marked expired.
 *
 * @module
 */
import type { CanonicalRequest } from "../canonical/mod.ts";
import type { Rollout } from "./rollout.ts";
import type { RolloutStore } from "./rollout_store.ts";
import type { Journal, JournalEvent, JournalWriter, TurnPlanned } from "./journaling/mod.ts";
import {
  fail,
  type OpenTurn,
  openTurn,
  record,
  splitChain,
  type TeacherScorer,
  type TurnFlight,
  type TurnRunner,
} from "./turns/mod.ts";
import { TurnTree } from "./tree/mod.ts";
import { placeOutput, placePrompt } from "./turn.ts";

/** What a restore replays into: the façade's parts (see `RolloutActions.restore`). */
export interface RestoreTarget {
  /** Must be empty. */
  store: RolloutStore;
  /** Its recording is off during the replay. */
  writer: JournalWriter;
  /** Replayed pending turns count in flight. */
  flight: TurnFlight;
  /** Generates the turns that were waiting for their answer again (`resume`). */
  runner: Pick<TurnRunner, "resume">;
  /** Scores again the recorded turns that have no teacher scoring yet. */
  scorer?: Pick<TeacherScorer, "resume">;
}

export interface RestoreReport {
  rollouts: number;
  turns: number;
  /** Requests put back in the queue. */
  requeued: number;
  /** Turns failed because the crash caught them before their prompt was built. */
  interrupted: number;
  /** Rollouts left in the journal as expired. */
  expired: number;
  ms: number;
}

/** The journal disagrees with what replaying it builds: it was changed or damaged. */
export class JournalReplayError extends Error {
  override name = "JournalReplayError";
}

interface Replayed {
  open: OpenTurn;
  toolCallIdPrefix: string;
  planned?: TurnPlanned;
}

/** Replays the journal into `target` and re-queues unanswered requests. */
export async function restore(
  journal: Journal,
  target: RestoreTarget,
  now = Date.now(),
): Promise<RestoreReport> {
  const { store, writer, runner } = target;
  const started = performance.now();
  const report: RestoreReport = {
    rollouts: 0,
    turns: 0,
    requeued: 0,
    interrupted: 0,
    expired: 0,
    ms: 0,
  };
  const resume: (() => void)[] = [];
  await writer.replaying(async () => {
    for (const jr of await journal.rollouts()) {
      if (jr.status === "expired" || now - jr.lastActivity > store.idleTimeoutMs) {
        if (jr.status !== "expired") await journal.expire(jr.id);
        store.markExpired(jr.id, jr.lastActivity);
        report.expired++;
        continue;
      }
      const turns = new Map<number, Replayed>();
      let rollout: Rollout | undefined;
      for await (const event of journal.events(jr.id)) {
        if (event.kind === "rollout_created") {
          rollout = store.create(event.data);
          continue;
        }
        if (!rollout) {
          throw new JournalReplayError(`rollout ${jr.id}: ${event.kind} before its creation`);
        }
        apply(rollout, event, turns, target);
      }
      if (!rollout) continue;
      const restored = rollout;
      resume.push(() => target.scorer?.resume(restored));
      report.rollouts++;
      report.turns += turns.size;
      for (const { open, planned, toolCallIdPrefix } of turns.values()) {
        if (open.turn.status !== "pending") continue;
        if (open.turn.blackBox || !planned) {
          report.interrupted++;
          // Failed (and journaled) after the replay, before anything new: the next replay
          // sees the failure where a retry that takes this turn's place saw it.
          resume.push(() =>
            fail(
              open,
              new Error("the gateway restarted before this request reached its backend; retry it"),
            )
          );
          continue;
        }
        report.requeued++;
        resume.push(() =>
          runner.resume(open, planned.requestId, planned.sampling, toolCallIdPrefix)
        );
      }
    }
  });
  // Once the replay is over: what happens from now on is journaled again.
  for (const next of resume) next();
  report.ms = performance.now() - started;
  return report;
}

function apply(
  rollout: Rollout,
  event: Exclude<JournalEvent, { kind: "rollout_created" }>,
  turns: Map<number, Replayed>,
  target: RestoreTarget,
): void {
  const replayed = (index: number) => {
    const t = turns.get(index);
    if (!t) throw new JournalReplayError(`rollout ${rollout.id}: ${event.kind} of an unknown turn`);
    return t;
  };
  switch (event.kind) {
    case "turn_registered": {
      const d = event.data;
      const node = d.prefix ? rollout.tree.node(d.prefix) : undefined;
      if (d.prefix && !node) {
        throw new JournalReplayError(`rollout ${rollout.id}: turn ${d.id} mounts on a lost node`);
      }
      const req = {
        ...d.request,
        messages: [...(node ? TurnTree.pathTo(node) : []), ...d.messages],
        tools: event.shared?.tools ?? [],
      } as CanonicalRequest;
      const mount = rollout.tree.mount(req.messages, TurnTree.rootKey(req));
      const open = target.flight.track(openTurn(rollout, req, mount, target.writer, {
        idSuffix: d.id.slice(d.id.lastIndexOf(".") + 1),
        toolCallIdPrefix: d.toolCallIdPrefix,
        blackBox: d.blackBox,
      }));
      if (open.turn.id !== d.id || mount.node.id !== d.prefix) {
        throw new JournalReplayError(
          `rollout ${rollout.id}: turn ${d.id} replays as ${open.turn.id} on node ${mount.node.id}`,
        );
      }
      open.turn.timings.received = d.received;
      turns.set(d.index, { open, toolCallIdPrefix: d.toolCallIdPrefix });
      return;
    }
    case "turn_planned": {
      const d = event.data;
      const t = replayed(d.index);
      Object.assign(t.open.turn, d.plan, { maxTokens: d.maxTokens, header: d.header });
      if (d.rerender) splitChain(rollout, t.open.turn, d.rerender);
      placePrompt(t.open.turn, event.arrays?.bridge_ids ?? [], event.arrays?.delta_ids ?? []);
      t.open.turn.timings.rendered = d.rendered;
      t.planned = d;
      return;
    }
    case "turn_recorded": {
      const d = event.data;
      const { open } = replayed(d.index);
      const { turn } = open;
      placeOutput(turn, event.arrays?.output_ids ?? []);
      Object.assign(turn, {
        logprobs: event.arrays?.logprobs ? Float64Array.from(event.arrays.logprobs) : null,
        finishReason: d.finishReason,
        weightVersion: d.weightVersion,
        facts: d.facts,
        malformedToolCalls: d.malformedToolCalls,
        drift: d.drift,
        promptLength: d.promptLength,
        renderedMessages: d.renderedMessages,
        maxTokens: d.maxTokens,
      });
      turn.timings.rendered = d.rendered;
      turn.timings.completed = d.completed;
      record(open, d.answer);
      return;
    }
    case "turn_failed": {
      const { open } = replayed(event.data.index);
      open.turn.timings.completed = event.data.completed;
      fail(open, new Error(event.data.error));
      return;
    }
    case "turn_retried":
      replayed(event.data.index).open.turn.retries++;
      return;
    case "teacher_scored":
    case "teacher_failed": {
      const { turn } = replayed(event.data.index).open;
      (rollout.teacherScores ??= new Map()).set(
        turn.id,
        event.kind === "teacher_scored"
          ? { logprobs: Float64Array.from(event.arrays?.logprobs ?? []) }
          : { error: event.data.error },
      );
      return;
    }
    case "turn_reward":
      (rollout.turnRewards ??= new Map()).set(
        replayed(event.data.index).open.turn.id,
        event.data.reward,
      );
      return;
    case "rollout_finished":
      rollout.finish(event.data.reward, event.data.referenceVersion ?? null);
      rollout.finishedAt = event.data.finishedAt;
      return;
    case "host_call":
      rollout.hostCalls.push(event.data);
      rollout.hostCallBytes += event.data.bytes;
      return;
    case "agent_exit":
      rollout.agentExit = event.data;
      return;
    default:
      throw new JournalReplayError(
        `rollout ${rollout.id}: unknown event ${(event satisfies never as JournalEvent).kind}`,
      );
  }
}
