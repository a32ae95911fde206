/**
 * The journal, private to `trajectory/`: the `Journal` contract a store implements (SQLite,
 * PostgreSQL), every event as one type per kind with its one builder, and the writer that makes
 * them durable in call order. Only the façade (`RolloutActions`), the turn code and restore use it.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rolloutCreated, rolloutFinished } from "./mod.ts";
 * import { RolloutStore } from "../mod.ts";
 *
 * const rollout = new RolloutStore().create({ id: "r1", metadata: { task: "demo" } });
 * const created = rolloutCreated(rollout, { metadata: { task: "demo" } });
 * assert.equal(created.kind, "rollout_created");
 * assert.equal(created.data.id, "r1");
 * assert.equal(rolloutFinished(rollout).rollout, "r1");
 * ```
 *
 * @module
 */
export type { Journal, JournaledRollout } from "./journal.ts";
export { JournalError, JournalWriter } from "./journal_writer.ts";
export {
  agentExit,
  hostCall,
  type JournalEvent,
  rolloutCreated,
  rolloutFinished,
  teacherFailed,
  teacherScored,
  turnFailed,
  type TurnPlanned,
  turnPlanned,
  turnRecorded,
  turnRegistered,
  turnRetried,
  turnReward,
} from "./journal_events.ts";
