/**
 * One SWE rollout, start to reward: a sandbox with the task's base repository (and the gateway,
 * when given) → the agent works in it → its changes are captured as a diff → the sandbox is
 * killed → the diff is graded in a fresh sandbox ({@link evaluatePatch}). The agent's sandbox
 * never sees the hidden tests or the reward.
 *
 * @example
 * ```ts
 * import { runEpisode, type SweTask } from "./mod.ts";
 * import { type SandboxProvider, shellQuote } from "../mod.ts";
 * declare const provider: SandboxProvider;
 * declare const task: SweTask;
 * declare const gateway: { fetch: (req: Request) => Response | Promise<Response> };
 *
 * const result = await runEpisode({
 *   provider,
 *   task,
 *   gateway: { rolloutId: "r1", fetch: gateway.fetch },
 *   agent: (sbx) =>
 *     sbx.exec(`claude -p ${shellQuote(task.problem_statement)}`, { timeoutMs: 600_000 }),
 * });
 * result.report.reward;
 * ```
 *
 * @module
 */
import type { GatewayAccess, Sandbox, SandboxProvider, SandboxSpec } from "../sandbox.ts";
import { captureDiff } from "./diff.ts";
import { type EvalOptions, type EvalReport, evaluatePatch } from "./evaluate.ts";
import type { SweTask } from "./task.ts";
import { prepareWorkspace, type Workspace } from "./workspace.ts";

export interface EpisodeOptions<T> {
  provider: SandboxProvider;
  task: SweTask;
  /** Runs the agent in the prepared sandbox (cwd = the repository). */
  agent: (sandbox: Sandbox, workspace: Workspace) => Promise<T>;
  /** How the agent reaches the gateway; without it the agent's sandbox is offline. */
  gateway?: GatewayAccess;
  /** Overrides for the agent's sandbox (env, lifetime, labels, image…). */
  spec?: Partial<SandboxSpec>;
  eval?: EvalOptions;
}

export interface EpisodeResult<T> {
  /** What `agent` returned (undefined when it threw). */
  agent?: T;
  /** The agent's exception, if any (the diff is still captured and graded). */
  agentError?: string;
  /** The agent's changes against the base commit. */
  patch: string;
  report: EvalReport;
}

/** Runs `agent` on `task` and grades what it left in the workspace. */
export async function runEpisode<T>(o: EpisodeOptions<T>): Promise<EpisodeResult<T>> {
  const sandbox = await o.provider.create({
    image: o.task.image,
    gateway: o.gateway,
    ...o.spec,
    labels: { "rollgate.task": o.task.instance_id, "rollgate.purpose": "agent", ...o.spec?.labels },
  });
  let patch: string;
  let agent: T | undefined;
  let agentError: string | undefined;
  try {
    const workspace = await prepareWorkspace(sandbox, o.task);
    try {
      agent = await o.agent(sandbox, workspace);
    } catch (err) {
      agentError = err instanceof Error ? err.message : String(err);
    }
    patch = await captureDiff(sandbox, workspace.baseCommit);
  } finally {
    await sandbox.kill();
  }
  const report = await evaluatePatch(o.provider, o.task, patch, o.eval);
  return { agent, agentError, patch, report };
}
