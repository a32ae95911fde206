/**
 * What the Claude Code label scenarios (`claude_code_labels_test.ts`) share: a rig of one
 * rollout in a fresh `main.ts serve` child process (gate mode) with the policy TEST DOUBLE
 * answering it, a git workdir and a `HOME` kept across several CLI runs (so `--resume` finds the
 * session); and the checks every scenario makes on the recorded tree.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  claudeCode,
  describeRun,
  type Harness,
  runLocal,
  type RunResult,
  tail,
} from "../../harness/mod.ts";
import type { AssistantMessage, Message } from "../../canonical/mod.ts";
import type { Sample, TurnRecord, TurnTreeExport } from "../../trajectory/mod.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { checkLossOwnership } from "../support/loss_ownership.ts";
import { sharedModel } from "../support/scripted_policy.ts";
import { api, makeWorkdir, MODEL_ID, RUN_BUDGET_MS } from "./cli_scenario.ts";
import { startEgressProbe } from "./egress_probe.ts";
import { GatePolicyTestDouble, type GateRecord, type GateScript } from "./gate_policy.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";

const MISSING = cliMissing(claudeCode);

/** Claude Code with extra command-line arguments (`--session-id`, `--resume`). */
export function claudeWith(...extra: string[]): Harness {
  return { ...claudeCode, args: (prompt, o) => [...claudeCode.args(prompt, o), ...extra] };
}

/** The last user segment of a decoded Qwen3 prompt (tool responses are rendered as user turns). */
export function lastUser(text: string): string {
  return text.slice(text.lastIndexOf("<|im_start|>user"));
}

/** One rollout in a fresh gateway, a git workdir and a `HOME` kept across the CLI runs. */
export class LabelsRig {
  readonly runs: RunResult[] = [];
  readonly attempts: string[] = [];
  private constructor(
    readonly tmp: string,
    readonly gw: GatewayProcess,
    readonly rollout: { id: string; token: string },
    readonly policy: GatePolicyTestDouble,
  ) {}

  static async start(name: string, script: GateScript): Promise<LabelsRig> {
    const tmp = await Deno.makeTempDir({ prefix: `rollgate-e2e-labels-${name}-` });
    let gw: GatewayProcess | undefined;
    try {
      await makeWorkdir(`${tmp}/work`);
      await sharedModel();
      gw = await startGateway();
      const rollout = await api<{ id: string; token: string }>(gw, "/api/rollouts", {
        metadata: { harness: "claude-code", scenario: name },
      });
      const policy = new GatePolicyTestDouble(gw.url, script, rollout.id).start();
      return new LabelsRig(tmp, gw, rollout, policy);
    } catch (e) {
      await gw?.stop();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
      throw e;
    }
  }

  get workdir(): string {
    return `${this.tmp}/work`;
  }

  /** Runs Claude Code once (extra arguments appended); asserts it succeeded unless told not to. */
  async claude(prompt: string, args: string[] = [], expectOk = true): Promise<RunResult> {
    const probe = startEgressProbe();
    try {
      const run = await runLocal(claudeWith(...args), prompt, {
        gatewayUrl: this.gw.url,
        rolloutId: this.rollout.id,
        token: this.rollout.token,
        model: MODEL_ID,
        workdir: this.workdir,
        home: `${this.tmp}/home`,
      }, { timeoutMs: RUN_BUDGET_MS, extraEnv: probe.env() });
      this.runs.push(run);
      console.log(
        `claude-code ${JSON.stringify(prompt)}: ${run.durationMs} ms, exit ${run.exitCode}`,
      );
      if (expectOk) {
        assert.ok(run.completion.ok, `the CLI's completion says ok: ${run.completion.error}`);
      }
      return run;
    } finally {
      this.attempts.push(...probe.attempts);
      await probe.close();
    }
  }

  tree(): Promise<TurnTreeExport> {
    return api<TurnTreeExport>(this.gw, `/api/rollouts/${this.rollout.id}/tree`);
  }

  /** Finishes the rollout; checks that its samples train every sampled id exactly once. */
  async finish(): Promise<Sample[]> {
    const r = await api<{ samples: Sample[] }>(this.gw, `/api/rollouts/${this.rollout.id}/finish`, {
      reward: 1,
    });
    checkLossOwnership(await this.tree(), r.samples);
    return r.samples;
  }

  async close(failed: unknown): Promise<void> {
    try {
      await this.policy.stop();
    } finally {
      if (failed) {
        console.error([
          `=== e2e claude-code labels failed ===`,
          ...this.runs.map(describeRun),
          `--- outside attempts ---\n${this.attempts.join("\n") || "(none)"}`,
          `--- policy records ---\n${summarize(this.policy.records)}`,
          `--- gateway log (tail) ---\n${tail(this.gw.output())}`,
        ].join("\n"));
      }
      await this.gw.stop();
      await Deno.remove(this.tmp, { recursive: true }).catch(() => {});
    }
  }
}

function summarize(records: GateRecord[]): string {
  return records.map((r, i) =>
    `#${i} ${r.turn_id}: prompt ${r.prompt_ids.length} ids, ` +
    (r.failed ? `failed ${r.failed.status}` : `output ${r.output_ids.length} ids`) +
    `; last user: ${JSON.stringify(lastUser(r.text).slice(0, 160))}`
  ).join("\n") || "(none)";
}

/** Registers a labels scenario (ignored when Claude Code is missing). */
export function labelsTest(
  name: string,
  script: GateScript,
  body: (rig: LabelsRig) => Promise<void>,
): void {
  Deno.test({
    name: `e2e claude-code labels: ${name}` + (MISSING ? ` [skipped: ${MISSING}]` : ""),
    ignore: skipGroup("e2e claude-code labels", MISSING),
    async fn() {
      const rig = await LabelsRig.start(name.split(":")[0].replace(/[^a-z]+/gi, "-"), script);
      let failed: unknown;
      try {
        await body(rig);
        assert.deepEqual(rig.attempts, [], "no attempt to reach the outside through the proxy");
      } catch (e) {
        failed = e;
        throw e;
      } finally {
        await rig.close(failed);
      }
    },
  });
}

/** Invariants every scenario keeps: one policy request per turn, no duplicates, no drift. */
export function checkTurns(tree: TurnTreeExport, records: GateRecord[]): void {
  const ids = tree.turns.map((t) => t.id);
  assert.equal(new Set(ids).size, ids.length, "turn ids are unique");
  assert.deepEqual(
    records.map((r) => r.turn_id).sort(),
    [...ids].sort(),
    "every turn reached the policy exactly once",
  );
  const done = tree.turns.filter((t) => t.status === "done");
  const histories = done.map((t) => JSON.stringify([t.messages, t.tools]));
  assert.equal(new Set(histories).size, done.length, "no two done turns share a history");
  for (const t of done) {
    assert.equal(t.drift, null, `turn ${t.id} has no drift`);
    assert.equal(t.retries, 0, `turn ${t.id} was not replayed`);
  }
  const byId = new Map(records.map((r) => [r.turn_id, r]));
  for (const t of done) {
    const r = byId.get(t.id)!;
    assert.deepEqual(t.prompt_ids, r.prompt_ids, `turn ${t.id}: the prompt the policy saw`);
    assert.deepEqual(t.output_ids, r.output_ids, `turn ${t.id}: the ids the policy sampled`);
    const parent = tree.turns.find((p) => p.id === t.parent);
    if (parent) {
      const chain = [...parent.prompt_ids, ...parent.output_ids];
      assert.deepEqual(t.prompt_ids.slice(0, chain.length), chain, `${t.id} bridges ${parent.id}`);
    }
  }
}

export function chainTurns(tree: TurnTreeExport, chain: number): TurnRecord[] {
  return tree.turns.filter((t) => t.chain === chain);
}

export function toolCallOf(t: TurnRecord, name: string) {
  return (t.answer as AssistantMessage | null)?.tool_calls?.find((c) => c.name === name);
}

export function toolResult(messages: Message[], id: string): string | undefined {
  const m = messages.find((m) => m.role === "tool" && m.tool_call_id === id);
  return m?.content;
}
