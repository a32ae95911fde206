/**
 * What a gateway's `RolloutActions` is made of: the model, the backends and the gate, the
 * journal, the image store and the sample log, and the turn runner's and teachers' settings.
 *
 * @module
 */
import type { GenerationBackend, RequestQueue, Teachers } from "../generation/mod.ts";
import type { PolicyModel } from "../model/mod.ts";
import type { Journal } from "./journaling/mod.ts";
import type { SampleLog } from "./samples/mod.ts";
import type { TeacherScoring, TurnRunnerOptions } from "./turns/mod.ts";
import type { ImageStore } from "./image_store.ts";

export interface RolloutActionsOptions {
  model: PolicyModel;
  /** The default generation backend; default: the gate. */
  backend?: GenerationBackend;
  /** Named backends a rollout can choose (`CreateRollout.backend`). */
  backends?: Readonly<Record<string, GenerationBackend>>;
  /**
   * Where trainers take requests from (default: an interception gate; replicas share one in
   * their database); its requests are completed, failed and withdrawn here.
   */
  gate?: RequestQueue;
  /** The durable store of every change; default: none (a throwaway gateway). */
  journal?: Journal;
  /** Where the images turns show are kept; default: the journal (without one: none). */
  images?: ImageStore;
  /** Where finished samples are logged; default: the journal, else the latest in memory. */
  sampleLog?: SampleLog;
  /** A rollout idle for this long leaves memory (`RolloutStore`). */
  idleTimeoutMs?: number;
  /** The turn runner's timeouts, limits, pause gate and observer. */
  turns?: Omit<TurnRunnerOptions, "writer" | "flight" | "onRecorded">;
  /** The teachers rollouts may name (on-policy distillation); default: none. */
  teachers?: Teachers;
  /** How teacher scorings are tried again and how long finishing waits for them. */
  teacherScoring?: TeacherScoring;
}
