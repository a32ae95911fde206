/**
 * `main.ts agent`: one real agent CLI (pi) run against a rollout created on a running gateway,
 * the outcome printed as one JSON line (arguments after `--` passed to the CLI); what a Python
 * trainer's launcher calls. The scripted
 * policy double resolves the gate.
 *
 * @module
 */
import assert from "node:assert/strict";
import { pi } from "../../harness/mod.ts";
import { DENO, startGateway } from "../support/gateway_process.ts";
import { ScriptedPolicy, sharedModel } from "../support/scripted_policy.ts";
import { cliMissing, skipGroup } from "../support/skips.ts";
import {
  api,
  FILE_NAME,
  FILE_TEXT,
  FINAL_TEXT,
  makeWorkdir,
  PROMPT,
  scenarioScript,
} from "./cli_scenario.ts";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

async function agentVerb(args: string[]) {
  const out = await new Deno.Command(DENO, {
    args: ["run", "-A", MAIN, "agent", ...args],
    stdin: "null",
    signal: AbortSignal.timeout(180_000),
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("main.ts agent: a missing flag is a usage error naming it", async () => {
  const r = await agentVerb(["--harness", "pi", "--gateway", "http://127.0.0.1:1"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--rollout is required/);
});

const missing = cliMissing(pi);
Deno.test({
  name: "main.ts agent: pi runs once against an existing rollout and reports its outcome" +
    (missing ? ` [skipped: ${missing}]` : ""),
  ignore: skipGroup("e2e pi", missing),
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "rollgate-agent-verb-" });
    const gw = await startGateway(["--no-journal"]);
    const rollout = await api(gw, "/api/rollouts", {});
    const policy = new ScriptedPolicy(gw.url, scenarioScript(pi), { rollout: rollout.id }).start();
    try {
      await makeWorkdir(`${tmp}/work`);
      const r = await agentVerb([
        "--harness",
        "pi",
        "--gateway",
        gw.url,
        "--rollout",
        rollout.id,
        "--token",
        rollout.token,
        "--workdir",
        `${tmp}/work`,
        "--prompt",
        PROMPT,
        "--time-budget",
        "120",
        "--",
        "--tools",
        "bash",
        "--system-prompt",
        "Use the bash tool.",
      ]);
      assert.equal(r.code, 0, r.stderr);
      const outcome = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
      assert.equal(outcome.ok, true);
      assert.equal(outcome.final_text.trim(), FINAL_TEXT);
      assert.equal(outcome.timed_out, false);
      assert.equal(await Deno.readTextFile(`${tmp}/work/${FILE_NAME}`), `${FILE_TEXT}\n`);
      assert.equal(policy.records.length, 2, "both turns went through the rollout");
      const first = await (await sharedModel()).decode(policy.records[0].prompt_ids);
      const tools = [...first.matchAll(/"name": "(\w+)"/g)].map((m) => m[1]);
      assert.deepEqual(tools, ["bash"], "the arguments after -- reached pi: its bash tool alone");
      assert.match(first, /^<\|im_start\|>system\nUse the bash tool\./, "and its system prompt");
    } finally {
      await policy.stop();
      await gw.stop();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});
