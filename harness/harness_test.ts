import assert from "node:assert/strict";
import {
  claudeCode,
  codex,
  harness,
  HARNESSES,
  isHarnessName,
  type LaunchOptions,
  pi,
} from "./mod.ts";
import { codexConfig } from "./codex.ts";
import { piModels } from "./pi.ts";

const o: LaunchOptions = {
  gatewayUrl: "http://127.0.0.1:8787/",
  rolloutId: "r_1",
  token: "tok-1",
  model: "rollgate-policy",
  workdir: "/w",
  home: "/h",
};

const lines = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

Deno.test("registry: every harness under its own name, unknown names listed", () => {
  for (const [name, h] of Object.entries(HARNESSES)) assert.equal(h.name, name);
  assert.equal(harness("pi"), pi);
  assert.ok(isHarnessName("codex"));
  assert.ok(!isHarnessName("toString"));
  assert.throws(
    () => harness("aider"),
    /unknown harness aider; known: claude-code, codex, pi, opencode, qwen-code, mini-swe-agent, gemini-cli$/,
  );
});

Deno.test("claude-code: base URL, token and zero-egress switches in the env, no PATH", () => {
  const env = claudeCode.env(o);
  assert.equal(env.ANTHROPIC_BASE_URL, "http://127.0.0.1:8787/rollout/r_1");
  assert.equal(env.ANTHROPIC_AUTH_TOKEN, "tok-1");
  assert.equal(env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC, "1");
  assert.equal(env.CLAUDE_CODE_ATTRIBUTION_HEADER, "0");
  assert.match(env.CLAUDE_CODE_MODEL_CAPABILITIES, /^rollgate-policy=-mid_conversation_system,/);
  assert.equal(env.HOME, "/h");
  assert.equal(env.TMPDIR, "/h/tmp");
  assert.equal(env.PATH, undefined);
  const args = claudeCode.args("do it", o);
  assert.deepEqual(args.slice(0, 2), ["-p", "do it"]);
  assert.ok(args.join(" ").includes("--output-format stream-json --verbose"));
  assert.ok(args.join(" ").includes("--allowedTools Bash"));
});

Deno.test("claude-code: completion from the result event", () => {
  const ok = lines({ type: "system", subtype: "init" }, {
    type: "result",
    subtype: "success",
    is_error: false,
    result: "Done.",
  });
  assert.deepEqual(claudeCode.completion(ok, 0), { ok: true, finalText: "Done." });
  const apiError = lines({
    type: "result",
    subtype: "success",
    is_error: true,
    terminal_reason: "api_error",
    result: "API Error: policy exploded",
  });
  assert.deepEqual(claudeCode.completion(apiError, 1), {
    ok: false,
    finalText: "API Error: policy exploded",
    error: "api_error: API Error: policy exploded",
  });
  assert.equal(claudeCode.completion("garbage\n", 1).ok, false);
});

Deno.test("codex: config.toml has the provider, zero-egress switches and no retries", () => {
  const toml = codexConfig(o);
  assert.ok(toml.includes('base_url = "http://127.0.0.1:8787/rollout/r_1/v1"'));
  assert.ok(toml.includes('env_key = "ROLLGATE_TOKEN"'));
  assert.ok(toml.includes('wire_api = "responses"'));
  assert.ok(toml.includes("request_max_retries = 0\nstream_max_retries = 0"));
  assert.ok(toml.includes("[analytics]\nenabled = false"));
  assert.ok(toml.includes("plugins = false"));
  assert.ok(toml.includes('model = "rollgate-policy"'));
  assert.equal(codex.env(o).ROLLGATE_TOKEN, "tok-1");
  assert.equal(codex.env(o).CODEX_HOME, "/h/.codex");
  assert.deepEqual(codex.args("p", o).slice(0, 3), ["exec", "--json", "--skip-git-repo-check"]);
});

Deno.test("codex: turn.completed is success, turn.failed is not, error items are warnings", () => {
  const warning = { type: "item.completed", item: { type: "error", message: "Model metadata…" } };
  const ok = lines(
    { type: "thread.started" },
    warning,
    { type: "item.completed", item: { type: "agent_message", text: "Done." } },
    { type: "turn.completed", usage: {} },
  );
  assert.deepEqual(codex.completion(ok, 0), { ok: true, finalText: "Done." });
  const failed = lines(
    warning,
    { type: "error", message: "stream disconnected before completion: boom" },
    { type: "turn.failed", error: { message: "stream disconnected before completion: boom" } },
  );
  assert.deepEqual(codex.completion(failed, 1), {
    ok: false,
    finalText: undefined,
    error: "stream disconnected before completion: boom",
  });
  assert.equal(codex.completion("", 0).ok, false);
});

Deno.test("pi: models.json points at the rollout's /v1 with the token from the env", () => {
  const models = piModels(o) as {
    providers: { rollgate: { baseUrl: string; apiKey: string; models: { id: string }[] } };
  };
  assert.equal(models.providers.rollgate.baseUrl, "http://127.0.0.1:8787/rollout/r_1/v1");
  assert.equal(models.providers.rollgate.apiKey, "ROLLGATE_TOKEN");
  assert.equal(models.providers.rollgate.models[0].id, "rollgate-policy");
  assert.equal(pi.env(o).ROLLGATE_TOKEN, "tok-1");
  assert.equal(pi.env(o).PI_OFFLINE, "1");
  const args = pi.args("p", o).join(" ");
  assert.ok(
    args.includes("-p --mode json --no-session --provider rollgate --model rollgate-policy"),
  );
});

Deno.test("pi: completion ignores the exit code and reads the last assistant message", () => {
  const user = { role: "user", content: [{ type: "text", text: "hi" }] };
  const answer = {
    role: "assistant",
    content: [{ type: "thinking", thinking: "…" }, { type: "text", text: "Done." }],
    stopReason: "stop",
  };
  const ok = lines({ type: "agent_start" }, { type: "agent_end", messages: [user, answer] });
  assert.deepEqual(pi.completion(ok, 0), { ok: true, finalText: "Done." });
  const error = { role: "assistant", content: [], stopReason: "error", errorMessage: "boom" };
  const failed = lines({ type: "agent_end", messages: [user, error] });
  assert.deepEqual(pi.completion(failed, 0), { ok: false, finalText: "", error: "boom" });
  const empty = { role: "assistant", content: [], stopReason: "stop" };
  assert.equal(pi.completion(lines({ type: "agent_end", messages: [user, empty] }), 0).ok, false);
  const retries = lines({ type: "auto_retry_end", success: false, finalError: "502" });
  assert.equal(pi.completion(retries, 0).error, "retries exhausted: 502");
  assert.equal(pi.completion("", 0).ok, false);
});

Deno.test("every harness: pinned install line, documented quirks, pure config files", () => {
  for (const h of Object.values(HARNESSES)) {
    assert.ok(h.install.length > 0, h.name);
    const pin = h.registry === "npm" ? `${h.package}@${h.version}` : `${h.package}==${h.version}`;
    assert.ok(h.install[0].includes(pin), h.install[0]);
    assert.ok(h.quirks.length >= 3, `${h.name} documents its quirks`);
    assert.deepEqual(h.configFiles(o), h.configFiles(o), "pure");
    for (const path of Object.keys(h.configFiles(o))) {
      assert.ok(!path.startsWith("/") && !path.includes(".."), `${path} is relative to HOME`);
    }
  }
  assert.deepEqual(claudeCode.configFiles(o), {});
  assert.deepEqual(codex.configFiles(o), { ".codex/config.toml": codexConfig(o) });
  assert.deepEqual(Object.keys(pi.configFiles(o)), [
    ".pi/agent/models.json",
    ".pi/agent/settings.json",
  ]);
  assert.deepEqual(JSON.parse(pi.configFiles(o)[".pi/agent/models.json"]), piModels(o));
});

Deno.test("prepare writes exactly the config files below HOME, plus its tmp dir", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "rollgate-harness-" });
  try {
    for (const h of Object.values(HARNESSES)) {
      const home = `${tmp}/${h.name}`;
      await h.prepare(home, { ...o, home });
      for (const [rel, text] of Object.entries(h.configFiles({ ...o, home }))) {
        assert.equal(await Deno.readTextFile(`${home}/${rel}`), text);
      }
      assert.ok((await Deno.stat(`${home}/tmp`)).isDirectory);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
