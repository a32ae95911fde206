/**
 * The end-to-end scenario every real agent CLI goes through: a real `main.ts serve` child process
 * in gate mode, the scripted policy double answering the gate over HTTP, and the CLI launched
 * through its harness plugin as a local subprocess in a fresh git repository.
 *
 * Turn 1: the policy runs a shell command through the CLI (its shell tool, or for an agent without
 * tools a fenced block in the reply) to create a file and list the directory. The CLI really runs
 * it and sends the output back. Turn 2 (the prompt now holds that output): a final answer (for an
 * agent without tools, the submit command carrying it). Then the recorded trajectory is checked
 * token for token.
 *
 * By default the policy is the bundled Qwen3 and writes Qwen3 text; with `family` it is that
 * model family's policy (gateway started with its flags) and writes the ids the family's own
 * renderer gives for the intended messages (`renderAnswer`), so every registered family runs the
 * same scenario (`families_test.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { describeRun, type Harness, runLocal, type RunResult, tail } from "../../harness/mod.ts";
import type { AssistantMessage } from "../../canonical/mod.ts";
import {
  containsRun,
  finalAnswerMessage,
  sampledIds,
  shellActionMessage,
} from "../../runner/mod.ts";
import { qwen3SampledText } from "../../model/mod.ts";
import type { FamilyTestModel } from "../support/family_models.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { checkLossOwnership } from "../support/loss_ownership.ts";
import type { TurnTreeExport } from "../../trajectory/mod.ts";
import { type EgressProbe, startEgressProbe } from "./egress_probe.ts";
import {
  type PolicyRecord,
  type Script,
  ScriptedPolicy,
  sharedModel,
} from "../support/scripted_policy.ts";
import { cliMissing, referenceMissing, skipGroup } from "../support/skips.ts";
import { bridgeRequest, renderRequest, withRenderers } from "../reference/renderers_env.ts";
import { firstDifference } from "../invariants/drive.ts";

export const MODEL_ID = "rollgate-policy";
export const FILE_NAME = "made-by-agent.txt";
export const FILE_TEXT = "e2e-ok";
export const COMMAND = `echo ${FILE_TEXT} > ${FILE_NAME} && ls -a`;
export const PROMPT =
  `Create a file named ${FILE_NAME} containing ${FILE_TEXT}, then list the files.`;
export const FINAL_TEXT = `Done: ${FILE_NAME} now contains ${FILE_TEXT}.`;
/** Time budget of one CLI run. */
export const RUN_BUDGET_MS = 120_000;

const ACTION_REASONING = "I will create the file with the shell.";
const DONE_REASONING = "The file exists now.";

/** The policy's two messages: the shell command, then the final answer. */
export function scenarioMessages(h: Harness): { action: AssistantMessage; done: AssistantMessage } {
  return {
    action: shellActionMessage(h, ACTION_REASONING, COMMAND),
    done: finalAnswerMessage(h, DONE_REASONING, FINAL_TEXT),
  };
}

/** What the scripted Qwen3 policy says: a shell command first, a final answer once its output is in. */
export function scenarioScript(h: Harness) {
  const { action, done } = scenarioMessages(h);
  return ({ text }: { text: string }): string => {
    const acted = h.shell.kind === "tool"
      ? text.includes("</tool_response>")
      : text.split("<|im_start|>assistant\n").length > 2;
    return qwen3SampledText(acted ? done : action);
  };
}

/**
 * The same in any family's format: the action until its sampled ids are in the prompt (its
 * output came back), then the final answer.
 */
export function familyScenarioScript(h: Harness, family: FamilyTestModel) {
  const { action, done } = scenarioMessages(h);
  let actionIds: Promise<number[]> | undefined;
  return async ({ ids }: { ids: number[] }): Promise<AssistantMessage> =>
    containsRun(ids, await (actionIds ??= sampledIds(family.model, action))) ? done : action;
}

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, stdin: "null" }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** A git repository with one commit, its identity set locally. */
export async function makeWorkdir(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "config", "user.name", "rollgate e2e");
  await git(dir, "config", "user.email", "e2e@rollgate.invalid");
  await Deno.writeTextFile(`${dir}/README.md`, "# e2e fixture\n\nA scratch repository.\n");
  await git(dir, "add", "README.md");
  await git(dir, "commit", "-q", "-m", "initial commit");
}

export interface SampleView {
  input_ids: number[];
  loss_mask: number[];
  logprobs: number[];
  reward: number | null;
  branch: string;
  chain: number;
  turns: string[];
  trained_from: number;
  num_sampled: number;
}

export interface TrainerView {
  id: string;
  token: string;
  turn_list: { id: string; status: string }[];
  samples: SampleView[];
}

/** A trainer API call (GET, or POST with a JSON body). */
export async function api<T = TrainerView>(
  gw: GatewayProcess,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(gw.url + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    // Every wait has an end: a gateway that stops answering fails the test, naming the call.
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${text}`);
  return JSON.parse(text);
}

/** The text of every `<tool_response>` block in a decoded prompt. */
export function toolResponses(text: string): string[] {
  return [...text.matchAll(/<tool_response>([\s\S]*?)<\/tool_response>/g)].map((m) => m[1]);
}

/**
 * The shell outputs in a decoded prompt: `<tool_response>` blocks, or for an agent without tools
 * the user messages that follow an assistant turn.
 */
export function shellOutputs(h: Harness, text: string): string[] {
  if (h.shell.kind === "tool") return toolResponses(text);
  const afterFirstAnswer = text.slice(text.indexOf("<|im_start|>assistant\n"));
  return [...afterFirstAnswer.matchAll(/<\|im_start\|>user\n([\s\S]*?)<\|im_end\|>/g)].map((m) =>
    m[1]
  );
}

/** The system message of a decoded Qwen3 prompt (empty when there is none). */
export function systemSegment(text: string): string {
  const m = /^<\|im_start\|>system\n([\s\S]*?)<\|im_end\|>/.exec(text);
  return m ? m[1] : "";
}

function summarizeRecords(records: PolicyRecord[]): string {
  return records.map((r, i) =>
    `#${i} ${r.request_id}: prompt ${r.prompt_ids.length} ids, output ${r.output_ids.length} ids`
  ).join("\n") || "(none)";
}

/**
 * In any family's format: the policy sampled exactly its family's ids for the two messages, the
 * shell's listing is what the gateway rendered between the two turns, and the CLI's system
 * prompt comes before the user's prompt in the first one.
 */
async function checkFamilyText(
  h: Harness,
  family: FamilyTestModel,
  r1: PolicyRecord,
  r2: PolicyRecord,
  systemMarker: string,
): Promise<void> {
  const { model } = family;
  const { action, done } = scenarioMessages(h);
  assert.deepEqual(r1.output_ids, await sampledIds(model, action), "turn 1: the family's call ids");
  assert.deepEqual(r2.output_ids, await sampledIds(model, done), "turn 2: the family's answer ids");
  const between = await model.decode(
    r2.prompt_ids.slice(r1.prompt_ids.length + r1.output_ids.length),
  );
  assert.ok(between.includes(FILE_NAME), `the shell's listing follows turn 1: ${between}`);
  const first = await model.decode(r1.prompt_ids);
  const [marker, prompt] = [first.indexOf(systemMarker), first.indexOf(PROMPT)];
  assert.ok(marker >= 0 && prompt > marker, "the CLI's system prompt, then the user's prompt");
}

/**
 * The two gate turns' prompts against `renderers` (`family.reference`), id for id: turn 1 is its
 * render of the CLI's first request, turn 2 its `bridge_to_next_turn` from turn 1's prompt and
 * sampled ids with the tool result (or, where it re-renders instead, its render of the second
 * request). Without the reference venv, nothing is checked here (`tests/families/` says so).
 */
async function checkAgainstRenderers(
  family: FamilyTestModel,
  tree: TurnTreeExport,
  r1: PolicyRecord,
  r2: PolicyRecord,
): Promise<void> {
  if (!family.reference || referenceMissing()) return;
  const [t1, t2] = tree.turns;
  const added = t2.messages.slice(t1.messages.length + 1);
  const [first, bridged, second] = await withRenderers(
    family.model.files.dir,
    family.reference.renderer,
    family.reference.config ?? {},
    [
      renderRequest(t1.messages, t1.tools, true),
      bridgeRequest(r1.prompt_ids, r1.output_ids, added, t2.tools),
      renderRequest(t2.messages, t2.tools, true),
    ],
  );
  for (const r of [first, bridged, second]) assert.equal(r.error, undefined, r.error);
  const deviation = family.reference.deviation?.(t1.messages, t1.tools);
  if (deviation !== undefined && firstDifference(r1.prompt_ids, first.ids!) !== -1) {
    // renderers' known departure from the template, and only that.
    const ours = await family.model.renderFull(t1.messages, t1.tools);
    assert.notEqual(ours.text, deviation, "turn 1: the ids differ where the texts do");
    assert.equal(first.text, deviation, "turn 1: renderers renders its documented deviation");
  } else {
    assert.deepEqual(r1.prompt_ids, first.ids, "turn 1's prompt is renderers' render, id for id");
  }
  const expected = (bridged.ids as number[] | null) ?? second.ids;
  assert.deepEqual(
    r2.prompt_ids,
    expected,
    `turn 2's prompt is renderers' ${bridged.ids ? "bridge" : "render"}, id for id`,
  );
}

/** Checks the recorded rollout against what the policy double saw and said. */
async function checkTrajectory(
  h: Harness,
  gw: GatewayProcess,
  rolloutId: string,
  records: PolicyRecord[],
  systemMarker: string,
  family?: FamilyTestModel,
): Promise<void> {
  assert.equal(records.length, 2, "the policy should have answered exactly 2 requests");
  const summary = await api(gw, `/api/rollouts/${rolloutId}`);
  assert.equal(summary.turn_list.length, 2, "exactly 2 turns recorded");
  for (const t of summary.turn_list) assert.equal(t.status, "done", `turn ${t.id} status`);

  const [r1, r2] = records;
  const chain1 = [...r1.prompt_ids, ...r1.output_ids];
  assert.deepEqual(
    r2.prompt_ids.slice(0, chain1.length),
    chain1,
    "turn 2's prompt starts with turn 1's prompt + output, sampled ids verbatim",
  );
  assert.ok(r2.prompt_ids.length > chain1.length, "turn 2 adds the tool result");

  const finished = await api(gw, `/api/rollouts/${rolloutId}/finish`, { reward: 1 });
  const { samples } = await api(gw, `/api/rollouts/${rolloutId}/samples`);
  assert.deepEqual(samples, finished.samples, "finish and samples agree");
  assert.equal(samples.length, 1, "one linear chain, one sample");
  const s = samples[0];
  assert.deepEqual(s.input_ids, [...r2.prompt_ids, ...r2.output_ids], "input_ids");
  assert.equal(s.reward, 1);
  assert.equal(s.branch, "main");
  assert.equal(s.turns.length, 2);

  const sampled = r1.output_ids.length + r2.output_ids.length;
  const gap = r2.prompt_ids.length - chain1.length;
  const fill = (v: number, n: number) => Array<number>(n).fill(v);
  const mask = [
    ...fill(0, r1.prompt_ids.length),
    ...fill(1, r1.output_ids.length),
    ...fill(0, gap),
    ...fill(1, r2.output_ids.length),
  ];
  assert.equal(s.loss_mask.reduce((a: number, b: number) => a + b, 0), sampled, "loss_mask sum");
  assert.equal(s.num_sampled, sampled, "num_sampled");
  assert.deepEqual(s.loss_mask, mask, "loss_mask is 1 exactly on the output ids");
  const logprobs = [
    ...fill(0, r1.prompt_ids.length),
    ...r1.logprobs,
    ...fill(0, gap),
    ...r2.logprobs,
  ];
  assert.deepEqual(s.logprobs, logprobs, "logprobs aligned with input_ids");
  const tree = await api<TurnTreeExport>(gw, `/api/rollouts/${rolloutId}/tree`);
  checkLossOwnership(tree, samples);

  if (family) {
    await checkFamilyText(h, family, r1, r2, systemMarker);
    await checkAgainstRenderers(family, tree, r1, r2);
    return;
  }
  const text = await (await sharedModel()).decode(s.input_ids);
  const outputs = shellOutputs(h, text);
  assert.equal(outputs.length, 1, "one shell output in the sample");
  assert.ok(
    outputs[0].includes(FILE_NAME),
    `the shell's listing reaches the prompt as the command's output: ${outputs[0]}`,
  );
  assert.ok(
    systemSegment(text).includes(systemMarker),
    `the CLI's system prompt (${JSON.stringify(systemMarker)}) is the rendered system message`,
  );
  assert.ok(text.includes(PROMPT), "the user's prompt is in the sample");
  const lastTurn = text.slice(text.lastIndexOf("<|im_start|>assistant\n"));
  assert.ok(
    lastTurn.endsWith("<|im_end|>") && lastTurn.includes(FINAL_TEXT),
    "the sample ends with the final answer",
  );
}

export interface ScenarioOptions {
  /** A distinctive substring of the CLI's own system prompt. */
  systemMarker: string;
  /** The policy streams its replies in chunks of this many ids before completing. */
  appendChunk?: number;
  /** A model family's policy instead of the bundled Qwen3. */
  family?: FamilyTestModel;
  /** A gateway already serving that policy (default: one started for this run). */
  gateway?: GatewayProcess;
  /** Runs before the policy answers each request (turn 0, 1): a chaos hook. */
  beforeAnswer?: (turn: number) => Promise<void>;
}

/** Registers the scenario as a `Deno.test` for one harness (ignored when the CLI is missing). */
export function cliScenarioTest(h: Harness, options: ScenarioOptions): void {
  const missing = cliMissing(h);
  Deno.test({
    name: `e2e ${h.name}: a shell command then the answer, recorded token for token` +
      (options.appendChunk ? ", streamed as sampled" : "") +
      (missing ? ` [skipped: ${missing}]` : ""),
    ignore: skipGroup(`e2e ${h.name}`, missing),
    fn: () => runScenario(h, options),
  });
}

/** The whole scenario for one harness. */
export async function runScenario(h: Harness, options: ScenarioOptions): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: `rollgate-e2e-${h.name}-` });
  const workdir = `${tmp}/work`;
  const home = `${tmp}/home`;
  let gw: GatewayProcess | undefined;
  let policy: ScriptedPolicy | undefined;
  let run: RunResult | undefined;
  let probe: EgressProbe | undefined;
  try {
    await makeWorkdir(workdir);
    const { family } = options;
    if (!family) await sharedModel();
    gw = options.gateway ?? await startGateway(family?.serveArgs);
    const rollout = await api(gw, "/api/rollouts", { metadata: { harness: h.name } });
    const script: Script = family ? familyScenarioScript(h, family) : scenarioScript(h);
    policy = new ScriptedPolicy(
      gw.url,
      async (p) => {
        await options.beforeAnswer?.(p.turn);
        return await script(p);
      },
      {
        rollout: rollout.id,
        appendChunk: options.appendChunk,
        model: family?.model,
      },
    ).start();
    probe = startEgressProbe();
    run = await runLocal(h, PROMPT, {
      gatewayUrl: gw.url,
      rolloutId: rollout.id,
      token: rollout.token,
      model: MODEL_ID,
      workdir,
      home,
    }, { timeoutMs: RUN_BUDGET_MS, extraEnv: probe.env() });
    console.log(`${h.name}: CLI run ${run.durationMs} ms, exit ${run.exitCode}`);

    assert.ok(run.completion.ok, `the CLI's completion says ok: ${run.completion.error}`);
    assert.equal(run.completion.finalText?.trim(), FINAL_TEXT, "the CLI reports the final answer");
    assert.equal(await Deno.readTextFile(`${workdir}/${FILE_NAME}`), `${FILE_TEXT}\n`, "the file");
    await checkTrajectory(h, gw, rollout.id, policy.records, options.systemMarker, family);
    assert.deepEqual(probe.attempts, [], "no attempt to reach the outside through the proxy");
  } catch (e) {
    const context = [
      `=== e2e ${h.name} failed ===`,
      run ? describeRun(run) : "(the CLI did not run)",
      `--- outside attempts ---\n${probe?.attempts.join("\n") || "(none)"}`,
      `--- policy records ---\n${summarizeRecords(policy?.records ?? [])}`,
      `--- gateway log (tail) ---\n${tail(gw?.output() ?? "(no gateway)")}`,
    ].join("\n");
    console.error(context);
    throw e;
  } finally {
    await policy?.stop();
    await probe?.close();
    if (gw !== options.gateway) await gw?.stop();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}
