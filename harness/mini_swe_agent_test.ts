import assert from "node:assert/strict";
import { type LaunchOptions, miniSweAgent, sandboxLaunch } from "./mod.ts";
import { miniConfig } from "./mini_swe_agent.ts";

const o: LaunchOptions = {
  gatewayUrl: "http://127.0.0.1:8787",
  rolloutId: "r_1",
  token: "tok-1",
  model: "rollgate-policy",
  workdir: "/w",
  home: "/h",
};

Deno.test("mini-swe-agent: text actions through litellm at the rollout's /v1", () => {
  const rel = ".config/mini-swe-agent/rollgate.yaml";
  // JSON, which YAML reads as is.
  const config = JSON.parse(miniSweAgent.configFiles(o)[rel]);
  assert.deepEqual(JSON.parse(miniSweAgent.configFiles(o)[rel]), miniConfig(o));
  assert.equal(config.model.model_class, "litellm_textbased");
  assert.equal(config.model.model_name, "openai/rollgate-policy");
  assert.equal(config.model.model_kwargs.api_base, "http://127.0.0.1:8787/rollout/r_1/v1");
  assert.equal(config.agent.mode, "yolo");
  assert.equal(miniSweAgent.shell.kind, "text");

  const env = miniSweAgent.env(o);
  assert.equal(env.OPENAI_API_KEY, "tok-1");
  assert.equal(env.MSWEA_CONFIGURED, "true");
  assert.equal(env.LITELLM_LOCAL_MODEL_COST_MAP, "True");
  assert.equal(env.MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT, "1");

  const args = miniSweAgent.args("fix it", o);
  assert.deepEqual(args.slice(0, 4), ["-c", "mini_textbased.yaml", "-c", `/h/${rel}`]);
  assert.deepEqual(args.slice(args.indexOf("-o"), args.indexOf("-o") + 2), [
    "-o",
    `/h/${miniSweAgent.resultFile}`,
  ]);
  assert.deepEqual(args.slice(-2), ["-t", "fix it"]);
});

Deno.test("mini-swe-agent: the sandbox command; a pip install line into its own venv", () => {
  const run = sandboxLaunch(miniSweAgent, "fix it", o);
  const lines = run.command.split("\n");
  assert.equal(lines.at(-1)!.slice(0, 10), "exec mini ");
  assert.equal(lines[1], "rm -f /h/.config/mini-swe-agent/trajectory.json", "no stale outcome");
  assert.ok(run.command.includes("python3 -m venv /opt/rollgate/mini-swe-agent"));
  assert.ok(run.command.includes("mini-swe-agent==2.4.6 litellm=="));
  assert.ok(
    run.command.includes("ln -sf /opt/rollgate/mini-swe-agent/bin/mini /usr/local/bin/mini"),
  );
});

Deno.test("mini-swe-agent: completion from the saved trajectory, not the exit code", () => {
  const trajectory = (exit_status: string, submission: string, last: string) =>
    JSON.stringify({
      info: { exit_status, submission },
      messages: [{ role: "user", content: "task" }, { role: "exit", content: last }],
    });
  assert.deepEqual(miniSweAgent.completion("", 0, trajectory("Submitted", "Done.\n", "Done.\n")), {
    ok: true,
    finalText: "Done.\n",
  });
  assert.deepEqual(
    miniSweAgent.completion("", 0, trajectory("RepeatedFormatError", "", "RepeatedFormatError")),
    { ok: false, finalText: "", error: "RepeatedFormatError: RepeatedFormatError" },
  );
  const crashed = trajectory("InternalServerError", "", "litellm.InternalServerError: boom\n…");
  assert.equal(
    miniSweAgent.completion("", 1, crashed).error,
    "InternalServerError: litellm.InternalServerError: boom",
  );
  const none = miniSweAgent.completion("a\nb\nTraceback: x\n", 1, undefined);
  assert.equal(none.ok, false);
  assert.match(none.error!, /^no trajectory written \(exit code 1\): a \| b \| Traceback: x$/);
});
