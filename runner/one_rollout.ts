/**
 * One rollout, start to record: create it on the gateway (metadata: task, sample, harness) →
 * start the scripted policy for it (unless an external trainer answers) → the SWE episode
 * (`sandbox/swe`: sandbox with the gateway bridge, workspace, the agent CLI inside, diff, grading
 * in a fresh sandbox) → finish the rollout with the reward → one {@link RolloutRecord}.
 *
 * A rollout that cannot run (sandbox creation, workspace, diff capture failing; the CLI missing
 * in the sandbox) is deleted from the gateway and recorded with `error`, so a resumed run retries
 * it; an interrupted one is deleted and not recorded at all.
 *
 * @module
 */
import type { Gateway } from "../gateway/mod.ts";
import type { Harness } from "../harness/mod.ts";
import {
  type EpisodeResult,
  type GatewayAccess,
  runEpisode,
  type SandboxProvider,
  type SweTask,
} from "../sandbox/mod.ts";
import type { BackendName, PolicyName } from "./options.ts";
import type { RolloutRecord } from "./results_file.ts";
import { type AgentOutcome, runAgentInSandbox } from "./sandbox_agent.ts";
import { type ScriptedPolicyRun, scriptFor, startScriptedPolicy } from "./scripted_policy.ts";

/** What every rollout of a run shares. */
export interface RolloutContext {
  gw: Gateway;
  /** `/api` headers (the admin token, when set). */
  apiHeaders: Record<string, string>;
  provider: SandboxProvider;
  harness: Harness;
  /** Who answers the gate (scripted policies run only with the `gate` backend). */
  policy: PolicyName;
  backend: BackendName;
  /** What records name as the policy (`generatedBy`). */
  generator: string;
  /** Model id the agents send. */
  model: string;
  budgetMs: number;
  /** The gateway URL cloud sandboxes use; unset: the local socket bridge. */
  publicUrl?: string;
  signal?: AbortSignal;
}

/** What the agent is asked to do. */
export function agentPrompt(task: SweTask, workdir: string): string {
  return [
    `You are working in the git repository at ${workdir}. Resolve the issue below by editing the ` +
    "repository's source files. Do not add or change tests; hidden tests will check your fix.",
    "",
    "<issue>",
    task.problem_statement.trim(),
    "</issue>",
    ...(task.hints_text.trim() ? ["", "<hints>", task.hints_text.trim(), "</hints>"] : []),
  ].join("\n");
}

async function api<T>(
  ctx: RolloutContext,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await ctx.gw.app.fetch(
    new Request(`http://rollgate.internal${path}`, {
      method,
      headers: { "content-type": "application/json", ...ctx.apiHeaders },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

function gatewayAccess(ctx: RolloutContext, rolloutId: string): GatewayAccess {
  return ctx.publicUrl ? { rolloutId, url: ctx.publicUrl } : { rolloutId, fetch: ctx.gw.app.fetch };
}

/** A record with nothing run yet. */
function blankRecord(
  ctx: RolloutContext,
  task: SweTask,
  sample: number,
  rolloutId: string,
  startedAt: string,
  t0: number,
): RolloutRecord {
  return {
    rollout_id: rolloutId,
    task: task.instance_id,
    sample,
    harness: ctx.harness.name,
    reward: 0,
    tests: [],
    diff: "",
    agent: null,
    timings: {
      started_at: startedAt,
      agent_ms: null,
      eval_ms: null,
      total_ms: Math.round(performance.now() - t0),
    },
    samples: [],
    policy: ctx.generator,
    backend: ctx.backend,
    sandbox: ctx.provider.name,
    turns: 0,
    eval: null,
  };
}

/**
 * Why an episode says nothing about the policy, if it does not: the agent could not be run (a
 * sandbox or file error, the CLI missing), or grading broke (its sandbox failed, or the task's own
 * test patch did not apply). The agent's CLI failing is a result, not this.
 */
function infraFailure(episode: EpisodeResult<AgentOutcome>): string | undefined {
  if (episode.agentError !== undefined) return `agent run failed: ${episode.agentError}`;
  if (episode.agent?.cli_missing) return episode.agent.error ?? "agent CLI missing";
  const r = episode.report;
  if (r.error?.startsWith("evaluation failed")) return `grading failed: ${r.error}`;
  if (r.patch_applied && !r.test_patch_applied) return `grading failed: ${r.error}`;
  return undefined;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs one rollout; `undefined` when the run was interrupted (nothing to record). */
export async function runRollout(
  ctx: RolloutContext,
  task: SweTask,
  sample: number,
  rolloutId: string,
): Promise<RolloutRecord | undefined> {
  const t0 = performance.now();
  const startedAt = new Date().toISOString();
  const h = ctx.harness;
  let created: { id: string; token: string };
  try {
    created = await api(ctx, "POST", "/api/rollouts", {
      id: rolloutId,
      // A task's samples are one GRPO group: their advantages are relative to each other.
      group: task.instance_id,
      ...(ctx.backend === "gate" ? {} : { backend: ctx.backend }),
      metadata: { task: task.instance_id, sample, harness: h.name, policy: ctx.generator },
    });
  } catch (err) {
    return {
      ...blankRecord(ctx, task, sample, rolloutId, startedAt, t0),
      error: `creating the rollout failed: ${message(err)}`,
    };
  }
  let policy: ScriptedPolicyRun | undefined;
  if (ctx.backend === "gate" && ctx.policy !== "gate") {
    policy = startScriptedPolicy({
      gate: ctx.gw.rollouts,
      model: ctx.gw.model,
      rolloutId,
      script: scriptFor(ctx.policy, h, task, ctx.gw.model),
    });
  }
  let agentMs: number | null = null;
  let episode: EpisodeResult<AgentOutcome> | undefined;
  let failure: string | undefined;
  try {
    episode = await runEpisode<AgentOutcome>({
      provider: ctx.provider,
      task,
      gateway: gatewayAccess(ctx, rolloutId),
      spec: {
        lifetimeMs: ctx.budgetMs + 300_000,
        labels: { "rollgate.rollout": rolloutId, "rollgate.harness": h.name },
      },
      agent: async (sandbox, workspace) => {
        const t = performance.now();
        try {
          return await runAgentInSandbox({
            sandbox,
            harness: h,
            prompt: agentPrompt(task, workspace.dir),
            rolloutId,
            token: created.token,
            model: ctx.model,
            budgetMs: ctx.budgetMs,
            signal: ctx.signal,
          });
        } finally {
          agentMs = Math.round(performance.now() - t);
        }
      },
    });
    failure = infraFailure(episode);
  } catch (err) {
    failure = message(err);
  } finally {
    await policy?.stop();
  }

  const turns = ctx.gw.rollouts.get(rolloutId)?.turns.length ?? 0;
  if (ctx.signal?.aborted || failure !== undefined) {
    await api(ctx, "DELETE", `/api/rollouts/${rolloutId}`).catch(() => {});
    if (ctx.signal?.aborted) return undefined;
  }
  const report = episode?.report;
  let reward = failure === undefined ? report?.reward ?? 0 : 0;
  let samples: unknown[] = [];
  if (failure === undefined) {
    try {
      const finished = await api<{ samples: unknown[] }>(
        ctx,
        "POST",
        `/api/rollouts/${rolloutId}/finish`,
        { reward },
      );
      samples = finished.samples;
    } catch (err) {
      failure = `finishing the rollout failed: ${message(err)}`;
      reward = 0;
    }
  }
  const record = blankRecord(ctx, task, sample, rolloutId, startedAt, t0);
  record.reward = reward;
  record.tests = (report?.tests ?? []).map((t) => ({
    id: t.id,
    kind: t.kind,
    passed: t.passed,
    exit_code: t.exitCode,
    timed_out: t.timedOut,
    duration_ms: t.durationMs,
    output: t.output,
  }));
  record.diff = episode?.patch ?? "";
  record.agent = episode?.agent ?? null;
  record.timings.agent_ms = agentMs;
  record.timings.eval_ms = report?.durationMs ?? null;
  record.samples = samples;
  record.turns = turns;
  record.eval = report
    ? {
      patch_applied: report.patch_applied,
      test_patch_applied: report.test_patch_applied,
      error: report.error ?? null,
    }
    : null;
  if (failure !== undefined) record.error = failure;
  if (policy?.error) record.policy_error = policy.error;
  return record;
}
