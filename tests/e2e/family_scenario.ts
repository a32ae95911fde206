/**
 * The end-to-end scenario of `cli_scenario.ts` for a policy of another model family: a real
 * `main.ts serve --model-dir DIR` child process in gate mode (the family detected from the
 * directory), the real CLI through its harness plugin, and a scripted policy (TEST DOUBLE at the
 * model boundary) that writes each reply in the family's own answer form
 * (`PolicyModel.renderAnswerIds`: for gpt-oss, harmony's analysis + `to=functions.NAME` call
 * ending `<|call|>`, then a final answer ending `<|return|>`).
 *
 * Turn 1 runs the shell command through the CLI's shell tool; turn 2 (its output now in the
 * prompt) answers. Checked: the CLI's result and the file, turn 2's prompt extends turn 1's
 * prompt + sampled ids verbatim and holds the command's output, and the sample's loss mask is 1
 * exactly on the sampled ids.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { AssistantMessage } from "../../canonical/mod.ts";
import { describeRun, type Harness, runLocal, type RunResult, tail } from "../../harness/mod.ts";
import { PolicyModel } from "../../model/mod.ts";
import { scriptedLogprob } from "../../runner/mod.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";
import { postJson, trainerLoop } from "../support/trainer_loop.ts";
import {
  api,
  COMMAND,
  FILE_NAME,
  FILE_TEXT,
  FINAL_TEXT,
  makeWorkdir,
  MODEL_ID,
  PROMPT,
  RUN_BUDGET_MS,
} from "./cli_scenario.ts";

export interface FamilyScenario {
  /** The family's name, as the gateway reports it at startup. */
  family: string;
  /** The model directory the gateway serves. */
  modelDir: string;
  /** `--template-kwargs`. */
  templateKwargs?: Record<string, unknown>;
}

/** One request the policy answered. */
interface Exchange {
  prompt_ids: number[];
  output_ids: number[];
  logprobs: number[];
  prompt: string;
}

/** What the policy says on its `turn`-th request: the shell call, then the final answer. */
function reply(h: Harness, turn: number): AssistantMessage {
  if (h.shell.kind !== "tool") throw new Error(`${h.name}: the scenario needs a shell tool`);
  if (turn > 0) {
    return { role: "assistant", content: FINAL_TEXT, reasoning_content: "The file exists now." };
  }
  return {
    role: "assistant",
    content: "",
    reasoning_content: "I will create the file with the shell.",
    tool_calls: [{
      id: "",
      name: h.shell.name,
      arguments: JSON.stringify({ [h.shell.argument]: COMMAND }),
    }],
  };
}

/** Registers the scenario for one harness and family (ignored when the CLI is missing). */
export function familyScenarioTest(h: Harness, o: FamilyScenario): void {
  const missing = cliMissing(h);
  Deno.test({
    name: `e2e ${h.name} with a ${o.family} policy: a shell call then the answer, ` +
      "recorded token for token" + (missing ? ` [skipped: ${missing}]` : ""),
    ignore: skipGroup(`e2e ${h.name}`, missing),
    fn: () => runFamilyScenario(h, o),
  });
}

async function runFamilyScenario(h: Harness, o: FamilyScenario): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: `rollgate-e2e-${o.family}-${h.name}-` });
  const workdir = `${tmp}/work`;
  const model = await PolicyModel.load({ dir: o.modelDir, templateKwargs: o.templateKwargs });
  const records: Exchange[] = [];
  const abort = new AbortController();
  let gw: GatewayProcess | undefined;
  let loop: Promise<void> | undefined;
  let run: RunResult | undefined;
  try {
    await makeWorkdir(workdir);
    const kwargs = o.templateKwargs ? ["--template-kwargs", JSON.stringify(o.templateKwargs)] : [];
    gw = await startGateway(["--model-dir", o.modelDir, ...kwargs]);
    assert.match(gw.output(), new RegExp(`family ${o.family}[,)]`));
    const rollout = await api(gw, "/api/rollouts", { metadata: { harness: h.name } });
    const url = gw.url;
    loop = trainerLoop({
      gatewayUrl: url,
      rollout: rollout.id,
      signal: abort.signal,
      handle: async (req) => {
        const output_ids = await model.renderAnswerIds(reply(h, records.length));
        const logprobs = output_ids.map((_, i) => scriptedLogprob(i));
        await postJson(`${url}/api/requests/${req.request_id}/complete`, {
          output_ids,
          logprobs,
          finish_reason: "stop",
        });
        const prompt = await model.decode(req.prompt_ids);
        records.push({ prompt_ids: req.prompt_ids, output_ids, logprobs, prompt });
      },
    }).catch((e) => {
      if (!abort.signal.aborted) throw e;
    });
    run = await runLocal(h, PROMPT, {
      gatewayUrl: url,
      rolloutId: rollout.id,
      token: rollout.token,
      model: MODEL_ID,
      workdir,
      home: `${tmp}/home`,
    }, { timeoutMs: RUN_BUDGET_MS });
    console.log(`${h.name} (${o.family}): CLI run ${run.durationMs} ms, exit ${run.exitCode}`);

    assert.ok(run.completion.ok, `the CLI's completion says ok: ${run.completion.error}`);
    assert.equal(run.completion.finalText?.trim(), FINAL_TEXT, "the CLI reports the final answer");
    assert.equal(await Deno.readTextFile(`${workdir}/${FILE_NAME}`), `${FILE_TEXT}\n`, "the file");
    assert.equal(records.length, 2, "the policy answered exactly 2 requests");
    const [r1, r2] = records;
    const chain1 = [...r1.prompt_ids, ...r1.output_ids];
    assert.deepEqual(r2.prompt_ids.slice(0, chain1.length), chain1, "sampled ids verbatim");
    const added = await model.decode(r2.prompt_ids.slice(chain1.length));
    assert.ok(added.includes(FILE_NAME), `the command's output reaches the prompt: ${added}`);

    await api(gw, `/api/rollouts/${rollout.id}/finish`, { reward: 1 });
    const { samples } = await api(gw, `/api/rollouts/${rollout.id}/samples`);
    assert.equal(samples.length, 1, "one linear chain, one sample");
    const s = samples[0];
    assert.deepEqual(s.input_ids, [...r2.prompt_ids, ...r2.output_ids], "input_ids");
    const fill = (v: number, n: number) => Array<number>(n).fill(v);
    const gap = r2.prompt_ids.length - chain1.length;
    assert.deepEqual(s.loss_mask, [
      ...fill(0, r1.prompt_ids.length),
      ...fill(1, r1.output_ids.length),
      ...fill(0, gap),
      ...fill(1, r2.output_ids.length),
    ], "loss_mask is 1 exactly on the sampled ids");
    assert.deepEqual(s.logprobs, [
      ...fill(0, r1.prompt_ids.length),
      ...r1.logprobs,
      ...fill(0, gap),
      ...r2.logprobs,
    ], "logprobs aligned with input_ids");
  } catch (e) {
    console.error([
      `=== e2e ${h.name} (${o.family}) failed ===`,
      run ? describeRun(run) : "(the CLI did not run)",
      `--- prompts ---\n${records.map((r) => r.prompt.slice(-600)).join("\n---\n") || "(none)"}`,
      `--- gateway log (tail) ---\n${tail(gw?.output() ?? "(no gateway)")}`,
    ].join("\n"));
    throw e;
  } finally {
    abort.abort();
    await loop;
    await gw?.stop();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}
