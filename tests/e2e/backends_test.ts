/**
 * End to end through every generation backend: each real CLI (Claude Code, Codex, pi) does the
 * scenario of `cli_scenario.ts` (turn 1 a shell call that creates a file, turn 2 a final answer)
 * against a real `main.ts serve` child process started with
 *
 * - `--backend vllm --vllm-url <FakeVllm>` and `--backend sglang --sglang-url <FakeSglang>`:
 *   the fake engines (TEST DOUBLES) decode the prompt ids, pick the reply from them (the shell
 *   call until a `<tool_response>` is in the prompt, then the answer) and answer with real Qwen3
 *   ids and their own logprobs; the sample must hold exactly the engine's ids and logprobs;
 * - `--backend anthropic --upstream-anthropic-url <double>` (Claude Code) and
 *   `--backend openai --upstream-openai-url <double>/v1` (Codex, pi): a hosted-API TEST DOUBLE
 *   answering in each protocol's streaming shape; the sample is message-level
 *   (`token_ids: false`) and holds the tool result.
 *
 * One gateway per backend; the CLIs run one after the other against it, each in its own rollout.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  claudeCode,
  codex,
  describeRun,
  type Harness,
  pi,
  runLocal,
  type RunResult,
  tail,
} from "../../harness/mod.ts";
import type { Message } from "../../canonical/mod.ts";
import { engineLogprob, FakeSglang, FakeVllm, type Received } from "../backends/fake_engines.ts";
import { type GatewayProcess, startGateway } from "../support/gateway_process.ts";
import { sharedModel } from "../support/scripted_policy.ts";
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
  type SampleView,
  scenarioScript,
  toolResponses,
} from "./cli_scenario.ts";
import { startEgressProbe } from "./egress_probe.ts";
import { ScriptedUpstreamTestDouble } from "./scripted_upstream.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";

const ALL = [claudeCode, codex, pi];
// A backend's test runs with every installed CLI; each missing one is a skipped group.
const INSTALLED = ALL.filter((h) => !skipGroup(`e2e backends with ${h.name}`, cliMissing(h)));

interface RolloutTurn {
  id: string;
  status: string;
  mount: string;
  parent: string | null;
  weight_version: string | number | null;
}

interface BlackBoxSample extends SampleView {
  token_ids?: false;
  messages?: Message[];
}

interface CliRun {
  rolloutId: string;
  workdir: string;
  run: RunResult;
  turns: RolloutTurn[];
  samples: BlackBoxSample[];
}

/**
 * One CLI run in its own rollout and fresh git repository; checks what every backend shares
 * (the CLI's success, the file on disk, two finished turns in one chain) and returns the record.
 */
async function runCli(gw: GatewayProcess, h: Harness, tmp: string): Promise<CliRun> {
  const workdir = `${tmp}/${h.name}/work`;
  await makeWorkdir(workdir);
  const rollout = await api<{ id: string; token: string }>(gw, "/api/rollouts", {
    metadata: { harness: h.name },
  });
  const probe = startEgressProbe();
  let run: RunResult | undefined;
  try {
    run = await runLocal(h, PROMPT, {
      gatewayUrl: gw.url,
      rolloutId: rollout.id,
      token: rollout.token,
      model: MODEL_ID,
      workdir,
      home: `${tmp}/${h.name}/home`,
    }, { timeoutMs: RUN_BUDGET_MS, extraEnv: probe.env() });
    console.log(`${h.name}: CLI run ${run.durationMs} ms, exit ${run.exitCode}`);
    assert.ok(run.completion.ok, `the CLI's completion says ok: ${run.completion.error}`);
    assert.equal(run.completion.finalText?.trim(), FINAL_TEXT, "the CLI reports the final answer");
    assert.equal(await Deno.readTextFile(`${workdir}/${FILE_NAME}`), `${FILE_TEXT}\n`, "the file");
    assert.deepEqual(probe.attempts, [], "no attempt to reach the outside through the proxy");

    const summary = await api<{ turn_list: RolloutTurn[] }>(gw, `/api/rollouts/${rollout.id}`);
    const turns = summary.turn_list;
    assert.equal(turns.length, 2, "exactly 2 turns recorded");
    for (const t of turns) assert.equal(t.status, "done", `turn ${t.id} status`);
    assert.deepEqual(turns.map((t) => t.mount), ["root", "extend"], "turn 2 extends turn 1");
    assert.equal(turns[1].parent, turns[0].id);

    const finished = await api<{ samples: BlackBoxSample[] }>(
      gw,
      `/api/rollouts/${rollout.id}/finish`,
      { reward: 1 },
    );
    assert.equal(finished.samples.length, 1, "one chain, one sample");
    const s = finished.samples[0];
    assert.equal(s.branch, "main");
    assert.equal(s.reward, 1);
    assert.deepEqual(s.turns, turns.map((t) => t.id));
    return { rolloutId: rollout.id, workdir, run, turns, samples: finished.samples };
  } catch (e) {
    console.error([
      `=== e2e backends: ${h.name} failed ===`,
      run ? describeRun(run) : "(the CLI did not finish)",
      `--- outside attempts ---\n${probe.attempts.join("\n") || "(none)"}`,
      `--- gateway log (tail) ---\n${tail(gw.output())}`,
    ].join("\n"));
    throw e;
  } finally {
    await probe.close();
  }
}

type EngineKind = "vllm" | "sglang";

/** The prompt ids an engine request carried. */
function enginePrompt(kind: EngineKind, r: Received): number[] {
  return kind === "vllm" ? r.body.prompt : r.body.input_ids;
}

/** The sample holds exactly the engine's ids and logprobs; the prompts bridge token for token. */
async function checkEngineSample(kind: EngineKind, cli: CliRun, generations: Received[]) {
  assert.equal(generations.length, 2, "the engine generated exactly twice for this rollout");
  for (const g of generations) {
    assert.equal(g.headers.get("x-session-id"), cli.rolloutId, "sticky routing by rollout id");
    assert.ok(g.output?.length, "the engine answered");
  }
  const [g1, g2] = generations;
  const p1 = enginePrompt(kind, g1), p2 = enginePrompt(kind, g2);
  const o1 = g1.output!, o2 = g2.output!;
  assert.deepEqual(p2.slice(0, p1.length + o1.length), [...p1, ...o1], "turn 2 bridges turn 1");
  const s = cli.samples[0];
  assert.notEqual(s.token_ids, false);
  assert.deepEqual(s.input_ids, [...p2, ...o2], "input_ids: the last prompt + its output");
  const gap = p2.length - p1.length - o1.length;
  const zeros = (n: number) => Array<number>(n).fill(0);
  const ones = (n: number) => Array<number>(n).fill(1);
  assert.deepEqual(
    s.loss_mask,
    [...zeros(p1.length), ...ones(o1.length), ...zeros(gap), ...ones(o2.length)],
    "loss_mask is 1 exactly on the engine's sampled ids",
  );
  const lp = (o: number[]) => o.map((_, i) => engineLogprob(i));
  assert.deepEqual(
    s.logprobs,
    [...zeros(p1.length), ...lp(o1), ...zeros(gap), ...lp(o2)],
    "logprobs are the engine's",
  );
  assert.equal(s.num_sampled, o1.length + o2.length);
  for (const t of cli.turns) assert.equal(t.weight_version, "w-7", "engine weight version");

  const text = await (await sharedModel()).decode(s.input_ids);
  const responses = toolResponses(text);
  assert.equal(responses.length, 1, "one tool response in the sample");
  assert.ok(responses[0].includes(FILE_NAME), `the listing reaches the prompt: ${responses[0]}`);
  assert.ok(text.endsWith(`${FINAL_TEXT}<|im_end|>`), "the sample ends with the final answer");
}

function engineTest(kind: EngineKind): void {
  Deno.test({
    name: `e2e backends: ${kind} (${INSTALLED.map((h) => h.name).join(", ")})`,
    ignore: INSTALLED.length === 0,
    async fn(t) {
      const model = await sharedModel();
      // The reply depends on the prompt; only the shell tool's name depends on the CLI.
      let current: Harness = INSTALLED[0];
      const script = (p: { text: string }) => scenarioScript(current)(p);
      const engine = (kind === "vllm" ? new FakeVllm(model, script) : new FakeSglang(model, script))
        .start();
      const tmp = await Deno.makeTempDir({ prefix: `rollgate-e2e-${kind}-` });
      let gw: GatewayProcess | undefined;
      try {
        gw = await startGateway(["--backend", kind, `--${kind}-url`, engine.url]);
        for (const h of INSTALLED) {
          await t.step(h.name, async () => {
            current = h;
            const before = engine.generations.items.length;
            const cli = await runCli(gw!, h, tmp);
            await checkEngineSample(kind, cli, engine.generations.items.slice(before));
          });
        }
      } finally {
        await gw?.stop();
        await engine.close();
        await Deno.remove(tmp, { recursive: true }).catch(() => {});
      }
    },
  });
}

engineTest("vllm");
engineTest("sglang");

/** The message-level record: the tool result and the final answer, no token ids. */
function checkBlackBoxSample(cli: CliRun, upstream: ScriptedUpstreamTestDouble, from: number) {
  const received = upstream.received.slice(from);
  assert.equal(received.length, 2, "the upstream was called exactly twice for this rollout");
  for (const r of received) assert.equal(r.request.stream, true, "relayed as a streaming call");
  const call = received[0].answer.tool_calls?.[0];
  assert.ok(call, "the upstream's first answer is a tool call");
  assert.ok(
    received[1].request.messages.some((m) => m.role === "tool" && m.tool_call_id === call.id),
    "the CLI sent the tool result back upstream",
  );
  const s = cli.samples[0];
  assert.equal(s.token_ids, false, "black-box samples claim no token ids");
  assert.deepEqual(s.input_ids, []);
  assert.deepEqual(s.loss_mask, []);
  assert.deepEqual(s.logprobs, []);
  const messages = s.messages ?? [];
  const assistantCall = messages.find((m) => m.role === "assistant" && m.tool_calls?.length);
  assert.equal(assistantCall?.role === "assistant" && assistantCall.tool_calls?.[0].id, call.id);
  const result = messages.find((m) => m.role === "tool");
  assert.ok(result?.role === "tool", "the sample's messages hold the tool result");
  assert.equal(result.tool_call_id, call.id, "the tool result answers the upstream's call");
  assert.ok(result.content.includes(FILE_NAME), `the listing is the result: ${result.content}`);
  const last = messages.at(-1);
  assert.equal(last?.role, "assistant");
  assert.equal(last?.content, FINAL_TEXT, "the sample ends with the upstream's final answer");
}

function blackBoxTest(backend: "anthropic" | "openai", harnesses: Harness[]): void {
  const installed = harnesses.filter((h) => INSTALLED.includes(h));
  Deno.test({
    name: `e2e backends: black-box ${backend} (${installed.map((h) => h.name).join(", ")})`,
    ignore: installed.length === 0,
    async fn(t) {
      const upstream = new ScriptedUpstreamTestDouble({
        shellTools: installed.flatMap((h) => h.shell.kind === "tool" ? [h.shell] : []),
        command: COMMAND,
        finalText: FINAL_TEXT,
      });
      const tmp = await Deno.makeTempDir({ prefix: `rollgate-e2e-${backend}-` });
      const url = backend === "anthropic" ? upstream.url : `${upstream.url}/v1`;
      let gw: GatewayProcess | undefined;
      try {
        gw = await startGateway(["--backend", backend, `--upstream-${backend}-url`, url], {
          ANTHROPIC_API_KEY: "upstream-test-key",
          OPENAI_API_KEY: "upstream-test-key",
        });
        for (const h of installed) {
          await t.step(h.name, async () => {
            const before = upstream.received.length;
            const cli = await runCli(gw!, h, tmp);
            checkBlackBoxSample(cli, upstream, before);
          });
        }
      } finally {
        await gw?.stop();
        await upstream.close();
        await Deno.remove(tmp, { recursive: true }).catch(() => {});
      }
    },
  });
}

blackBoxTest("anthropic", [claudeCode]);
blackBoxTest("openai", [codex, pi]);
