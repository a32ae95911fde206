/**
 * Rebuilding the gateway's rollouts from the journal on start. Each rollout's events are replayed
 * in order through the same code that made them (`store.create`, `openTurn`, `record`, `fail`),
 * so tokens, message trees, chains and labels come back exactly as they were. Turns that were
 * waiting for their answer get their request back in the queue under the same request id; a turn
 * the crash caught before its prompt was built fails, so the agent's retry takes its place.
 * Rollouts idle for longer than the idle timeout stay in the journal, marked expired.
 *
 * @module
 */
import type { CanonicalRequest, TurnAnswer } from "../canonical/mod.ts";
import type { HostCall, Rollout } from "./rollout.ts";
import type { CreateRollout, RolloutStore } from "./rollout_store.ts";
import type { Journal, JournalEvent } from "./journal.ts";
import type { TurnPlanned, TurnRecorded, TurnRegistered } from "./journal_events.ts";
import { fail, type OpenTurn, openTurn, record } from "./turn_record.ts";
import type { TurnRunner } from "./turn_runner.ts";
import { TurnTree } from "./turn_tree.ts";
import { placeOutput, placePrompt } from "./turn.ts";

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

/** Replays the journal into `store` (which must be empty) and re-queues unanswered requests. */
export async function restore(
  journal: Journal,
  store: RolloutStore,
  runner: TurnRunner,
  now = Date.now(),
): Promise<RestoreReport> {
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
  await store.writer.replaying(async () => {
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
          rollout = store.create(event.data as CreateRollout);
          continue;
        }
        if (!rollout) {
          throw new JournalReplayError(`rollout ${jr.id}: ${event.kind} before its creation`);
        }
        apply(rollout, event, turns, runner, store);
      }
      if (!rollout) continue;
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
          runner.launch(open, planned.requestId, planned.sampling, toolCallIdPrefix)
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
  event: JournalEvent,
  turns: Map<number, Replayed>,
  runner: TurnRunner,
  store: RolloutStore,
): void {
  const data = event.data;
  const replayed = () => {
    const t = turns.get(data.index as number);
    if (!t) throw new JournalReplayError(`rollout ${rollout.id}: ${event.kind} of an unknown turn`);
    return t;
  };
  switch (event.kind) {
    case "turn_registered": {
      const d = data as unknown as TurnRegistered;
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
      const open = runner.track(openTurn(rollout, req, mount, store.writer, {
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
      const d = data as unknown as TurnPlanned;
      const t = replayed();
      Object.assign(t.open.turn, d.plan, { maxTokens: d.maxTokens, header: d.header });
      placePrompt(t.open.turn, event.arrays?.bridge_ids ?? [], event.arrays?.delta_ids ?? []);
      t.open.turn.timings.rendered = d.rendered;
      t.planned = d;
      return;
    }
    case "turn_recorded": {
      const d = data as unknown as TurnRecorded;
      const { turn } = replayed().open;
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
      record(replayed().open, d.answer as TurnAnswer);
      return;
    }
    case "turn_failed": {
      const t = replayed();
      t.open.turn.timings.completed = data.completed as number;
      fail(t.open, new Error(data.error as string));
      return;
    }
    case "turn_retried":
      replayed().open.turn.retries++;
      return;
    case "rollout_finished":
      rollout.finish(
        data.reward as number | null,
        (data.referenceVersion ?? null) as number | null,
      );
      rollout.finishedAt = data.finishedAt as number;
      return;
    case "host_call": {
      const call = data as unknown as HostCall;
      rollout.hostCalls.push(call);
      rollout.hostCallBytes += call.bytes;
      return;
    }
    case "agent_exit":
      rollout.agentExit = data as Rollout["agentExit"];
      return;
    default:
      throw new JournalReplayError(`rollout ${rollout.id}: unknown event ${event.kind}`);
  }
}
