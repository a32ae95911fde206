import assert from "node:assert/strict";
import { geminiCli, type LaunchOptions } from "./mod.ts";
import { geminiSettings } from "./gemini_cli.ts";

const o: LaunchOptions = {
  gatewayUrl: "http://127.0.0.1:8787/",
  rolloutId: "r_1",
  token: "tok-1",
  model: "rollgate-policy",
  workdir: "/w",
  home: "/h",
};

const lines = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

Deno.test("gemini-cli: settings pick API-key auth, stop statistics, loop detection and retries", () => {
  const settings = JSON.parse(geminiCli.configFiles(o)[".gemini/settings.json"]);
  assert.equal(settings.security.auth.selectedType, "gemini-api-key");
  assert.equal(settings.privacy.usageStatisticsEnabled, false, "the one switch zero egress needs");
  assert.equal(settings.general.maxAttempts, 1);
  assert.equal(settings.model.disableLoopDetection, true);
  assert.deepEqual(settings, geminiSettings());

  const env = geminiCli.env(o);
  assert.equal(env.GOOGLE_GEMINI_BASE_URL, "http://127.0.0.1:8787/rollout/r_1");
  assert.equal(env.GEMINI_API_KEY, "tok-1");
  assert.equal(env.GEMINI_CLI_TRUST_WORKSPACE, "true");
  assert.equal(env.HOME, "/h");
  assert.equal(env.PATH, undefined);
  assert.deepEqual(geminiCli.args("do it", o), [
    "-p",
    "do it",
    "--output-format",
    "stream-json",
    "-m",
    "rollgate-policy",
    "--approval-mode",
    "yolo",
  ]);
});

Deno.test("gemini-cli: completion from the result event, the answer after the last tool", () => {
  const ok = lines(
    { type: "init", session_id: "s", model: "rollgate-policy" },
    { type: "message", role: "user", content: "do it" },
    { type: "message", role: "assistant", content: "I will run a command.", delta: true },
    { type: "tool_use", tool_name: "run_shell_command", tool_id: "t", parameters: {} },
    { type: "tool_result", tool_id: "t", status: "success", output: "ok" },
    { type: "message", role: "assistant", content: "Done: ", delta: true },
    { type: "message", role: "assistant", content: "all good.", delta: true },
    { type: "result", status: "success", stats: {} },
  );
  assert.deepEqual(geminiCli.completion(ok, 0), { ok: true, finalText: "Done: all good." });
  const failed = lines(
    { type: "init" },
    { type: "error", severity: "error", message: "[API Error: 500 engine down]" },
    { type: "result", status: "error", error: { type: "Error", message: "[API Error: 500]" } },
  );
  assert.deepEqual(geminiCli.completion(failed, 1), {
    ok: false,
    finalText: undefined,
    error: "error: [API Error: 500]",
  });
  assert.deepEqual(geminiCli.completion("Invalid auth method selected.\n", 41), {
    ok: false,
    finalText: undefined,
    error: "no result event in the output (exit code 41)",
  });
  assert.equal(geminiCli.completion(lines({ type: "result", status: "success" }), 1).ok, false);
});
