import assert from "node:assert/strict";
import { type LaunchOptions, qwenCode } from "./mod.ts";
import { qwenSettings } from "./qwen_code.ts";

const o: LaunchOptions = {
  gatewayUrl: "http://127.0.0.1:8787",
  rolloutId: "r_1",
  token: "tok-1",
  model: "rollgate-policy",
  workdir: "/w",
  home: "/h",
};

const lines = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

Deno.test("qwen-code: settings stop statistics, updates, memory agents and SDK retries", () => {
  const settings = JSON.parse(qwenCode.configFiles(o)[".qwen/settings.json"]);
  assert.deepEqual(JSON.parse(qwenCode.configFiles(o)[".qwen/settings.json"]), qwenSettings());
  assert.equal(settings.security.auth.selectedType, "openai");
  assert.equal(settings.privacy.usageStatisticsEnabled, false);
  assert.equal(settings.telemetry.enabled, false);
  assert.equal(settings.general.enableAutoUpdate, false);
  assert.equal(settings.memory.enableManagedAutoMemory, false);
  assert.equal(settings.model.generationConfig.maxRetries, 0);
  assert.equal(settings.model.generationConfig.streamIdleTimeoutMs, 0);

  const env = qwenCode.env(o);
  assert.equal(env.OPENAI_BASE_URL, "http://127.0.0.1:8787/rollout/r_1/v1");
  assert.equal(env.OPENAI_API_KEY, "tok-1");
  assert.equal(env.OPENAI_MODEL, "rollgate-policy");
  assert.equal(env.HOME, "/h");
  assert.deepEqual(qwenCode.args("do it", o), [
    "--model",
    "rollgate-policy",
    "--approval-mode",
    "yolo",
    "--output-format",
    "stream-json",
    "do it",
  ]);
});

Deno.test("qwen-code: completion from the stream-json result event", () => {
  const ok = lines(
    { type: "system", subtype: "init" },
    { type: "result", subtype: "success", is_error: false, result: "Done." },
  );
  assert.deepEqual(qwenCode.completion(ok, 0), { ok: true, finalText: "Done." });
  const failed = lines({
    type: "result",
    subtype: "error_during_execution",
    is_error: true,
    error: { message: "[API Error: 500 injected failure]" },
  });
  assert.deepEqual(qwenCode.completion(failed, 1), {
    ok: false,
    finalText: undefined,
    error: "error_during_execution: [API Error: 500 injected failure]",
  });
  assert.equal(qwenCode.completion("Ripgrep not available\n", 1).ok, false);
});
