import assert from "node:assert/strict";
import { type LaunchOptions, opencode, opencodeConfig } from "./mod.ts";

const o: LaunchOptions = {
  gatewayUrl: "http://127.0.0.1:8787",
  rolloutId: "r_1",
  token: "tok-1",
  model: "rollgate-policy",
  workdir: "/w",
  home: "/h",
};

const lines = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

Deno.test("opencode: one openai-compatible provider at the rollout's /v1, token from the env", () => {
  const files = opencode.configFiles(o);
  const config = JSON.parse(files[".config/opencode/opencode.json"]);
  assert.deepEqual(JSON.parse(files[".config/opencode/opencode.json"]), opencodeConfig(o));
  const provider = config.provider.rollgate;
  assert.equal(provider.npm, "@ai-sdk/openai-compatible");
  assert.equal(provider.options.baseURL, "http://127.0.0.1:8787/rollout/r_1/v1");
  assert.equal(provider.options.apiKey, "{env:ROLLGATE_TOKEN}");
  assert.ok(provider.models["rollgate-policy"].tool_call);
  assert.equal(config.model, "rollgate/rollgate-policy");
  assert.equal(config.small_model, "rollgate/rollgate-policy");
  assert.equal(config.autoupdate, false);
  assert.equal(config.share, "disabled");
  const anthropic = opencodeConfig(o, "anthropic") as typeof config;
  assert.equal(anthropic.provider.rollgate.npm, "@ai-sdk/anthropic");

  // The plugin stub: node_modules and a lockfile listing the plugin, so nothing is installed.
  const pkg = JSON.parse(files[".config/opencode/package.json"]);
  const lock = JSON.parse(files[".config/opencode/package-lock.json"]);
  assert.deepEqual(lock.packages[""].dependencies, pkg.dependencies);
  assert.ok("@opencode-ai/plugin" in pkg.dependencies);
  assert.equal(files[".config/opencode/node_modules/.keep"], "");

  const env = opencode.env(o);
  assert.equal(env.ROLLGATE_TOKEN, "tok-1");
  assert.equal(env.XDG_CONFIG_HOME, "/h/.config");
  assert.equal(env.OPENCODE_DISABLE_MODELS_FETCH, "1");
  assert.equal(env.OPENCODE_DISABLE_AUTOUPDATE, "1");
  assert.equal(env.PATH, undefined);
});

Deno.test("opencode: run in JSON mode, no title call, the prompt as one argument after --", () => {
  const args = opencode.args("Fix issue 42: don't crash", o);
  assert.deepEqual(args.slice(0, 3), ["run", "--format", "json"]);
  assert.ok(args.includes("--auto"));
  assert.deepEqual(args.slice(args.indexOf("--title"), args.indexOf("--title") + 2), [
    "--title",
    "r_1",
  ]);
  assert.deepEqual(args.slice(-2), ["--", "Fix issue 42: don't crash"]);
});

Deno.test("opencode: completion from the JSON events", () => {
  const part = (type: string, messageID: string, extra = {}) => ({ type, messageID, ...extra });
  const ok = lines(
    { type: "step_start", part: part("step-start", "m1") },
    { type: "tool_use", part: part("tool", "m1") },
    { type: "step_finish", part: part("step-finish", "m1", { reason: "tool-calls" }) },
    { type: "text", part: part("text", "m2", { text: "Done" }) },
    { type: "text", part: part("text", "m2", { text: "." }) },
    { type: "step_finish", part: part("step-finish", "m2", { reason: "stop" }) },
  );
  assert.deepEqual(opencode.completion(ok, 0), { ok: true, finalText: "Done." });
  const failed = lines({
    type: "error",
    error: { name: "APIError", data: { message: "injected failure", statusCode: 500 } },
  });
  assert.deepEqual(opencode.completion(failed, 1), {
    ok: false,
    error: "APIError: injected failure",
  });
  const cut = lines({ type: "step_finish", part: part("step-finish", "m1", { reason: "length" }) });
  assert.equal(opencode.completion(cut, 0).ok, false);
  assert.equal(opencode.completion("", 0).ok, false);
});
