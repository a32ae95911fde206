/**
 * Codex CLI (`@openai/codex`): OpenAI Responses, configured by `$CODEX_HOME/config.toml`.
 *
 * Launch: `codex exec --json --skip-git-repo-check <prompt>` with stdin at `/dev/null` (an open
 * stdin blocks `exec` forever). The config file names a custom provider whose `base_url` is the
 * rollout's `/v1` and whose key comes from `ROLLGATE_TOKEN`; analytics and plugins are off (the
 * two switches that stop outside traffic), approvals never asked, Codex's own sandbox off
 * (rollgate's sandbox isolates), and no client retries: the gateway's errors surface at once.
 *
 * @module
 */
import {
  commonEnv,
  type Completion,
  type Harness,
  jsonLines,
  type LaunchOptions,
  npmInstallLine,
  rolloutBaseUrl,
  tomlString,
  writeConfigFiles,
} from "./harness.ts";

/** The environment variable the provider's `env_key` names. */
export const CODEX_TOKEN_ENV = "ROLLGATE_TOKEN";

/** `$CODEX_HOME` relative to `HOME`. */
export const CODEX_HOME_REL = ".codex";

/** `$CODEX_HOME` for a run. */
export function codexHome(home: string): string {
  return `${home}/${CODEX_HOME_REL}`;
}

/** The whole `config.toml` for one run. */
export function codexConfig(o: LaunchOptions): string {
  return `# Written by rollgate's codex harness for rollout ${o.rolloutId}.
model = ${tomlString(o.model)}
model_provider = "rollgate"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
remote_models = false
memories = false

[model_providers.rollgate]
name = "rollgate"
base_url = ${tomlString(`${rolloutBaseUrl(o)}/v1`)}
env_key = ${tomlString(CODEX_TOKEN_ENV)}
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false
`;
}

interface CodexItem {
  type?: string;
  text?: string;
  message?: string;
}

/** The npm package and the pinned version this plugin was written against. */
const NPM_PACKAGE = "@openai/codex";
const VERSION = "0.169.0";

export const codex: Harness = {
  name: "codex",
  protocol: "responses",
  registry: "npm",
  package: NPM_PACKAGE,
  version: VERSION,
  bin: "codex",
  shell: { kind: "tool", name: "exec_command", argument: "cmd" },
  install: [npmInstallLine(NPM_PACKAGE, VERSION)],
  quirks: [
    "speaks OpenAI Responses only (POST {base_url}/responses); needs SSE ending in " +
    "response.completed, a JSON reply fails the turn",
    "developer-role items (mapped to the template's system role) and environment items repeated " +
    "with identical ids every turn",
    "reasoning items echoed with encrypted_content verbatim and content:null added; key order " +
    "changes (type,status,id,...): history is compared as JSON values",
    "function_call arguments echoed as the exact string sent",
    "tool results wrapped in a 'Chunk ID / Wall time / Process exited with code … / Output:' " +
    "header, not raw stdout",
    "client_metadata key order random (ignored); retries off in config.toml",
  ],

  configFiles(o: LaunchOptions): Record<string, string> {
    return { [`${CODEX_HOME_REL}/config.toml`]: codexConfig(o) };
  },

  async prepare(home: string, o: LaunchOptions): Promise<void> {
    await writeConfigFiles(this, home, o);
  },

  env(o: LaunchOptions): Record<string, string> {
    return { ...commonEnv(o), CODEX_HOME: codexHome(o.home), [CODEX_TOKEN_ENV]: o.token };
  },

  args(prompt: string): string[] {
    return ["exec", "--json", "--skip-git-repo-check", "--strict-config", prompt];
  },

  /**
   * `turn.completed` without a `turn.failed` means success; the final text is the last
   * `agent_message` item. (`error` items such as "Model metadata … not found" are warnings.)
   */
  completion(stdout: string, exitCode: number): Completion {
    const events = jsonLines(stdout);
    let finalText: string | undefined;
    let failure: string | undefined;
    let lastError: string | undefined;
    let completed = false;
    for (const e of events) {
      const item = e.item as CodexItem | undefined;
      if (e.type === "item.completed" && item?.type === "agent_message") finalText = item.text;
      if (e.type === "turn.completed") completed = true;
      if (e.type === "error") lastError = String(e.message ?? "error");
      if (e.type === "turn.failed") {
        failure = (e.error as { message?: string } | undefined)?.message ?? lastError ??
          "turn.failed";
      }
    }
    if (failure !== undefined) return { ok: false, finalText, error: failure };
    if (!completed) {
      const why = lastError ?? `no turn.completed event (exit code ${exitCode})`;
      return { ok: false, finalText, error: why };
    }
    if (exitCode !== 0) return { ok: false, finalText, error: `exit code ${exitCode}` };
    return { ok: true, finalText };
  },
};
