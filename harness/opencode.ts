/**
 * OpenCode (`opencode-ai`): OpenAI Chat Completions through its `@ai-sdk/openai-compatible`
 * provider, configured by `~/.config/opencode/opencode.json`.
 *
 * Launch: `opencode run --format json --auto --title <rollout id> -- <prompt>` with stdin at
 * `/dev/null`. `--title` skips the title-generation call (a tool-less side request the policy would
 * otherwise have to answer); `--auto` approves what a headless run cannot ask about (e.g. a
 * command that writes to `$TMPDIR`, outside the project). `opencode run` wraps every argument that
 * contains a space in double quotes (inner `"` escaped) before joining its arguments, so the prompt
 * reaches the policy quoted, as it does for anyone running `opencode run "<prompt>"`. (Passing the
 * words one by one avoids the quotes but crashes on a word that looks like a number, which the
 * argument parser turns into one.)
 *
 * Why Chat and not the Anthropic provider (both were recorded, both replay through the gate
 * without a false branch, see `docs/agent-clients.md`): the system prompt and tools are identical
 * in both, and both echo reasoning, ids and text verbatim; Chat is how OpenCode is pointed at
 * self-hosted open models (the request stream a trainer of those models should see), and it maps
 * one to one onto canonical messages (`reasoning_content`, `role: "tool"`), while the Anthropic
 * provider adds block conversion, signatures and OpenCode's Anthropic-only message rewrites.
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
  writeConfigFiles,
} from "./harness.ts";

/** The provider id in `opencode.json` (models are `rollgate/<model>`). */
export const OPENCODE_PROVIDER = "rollgate";
/** The environment variable the provider's `apiKey` reads. */
export const OPENCODE_TOKEN_ENV = "ROLLGATE_TOKEN";
/** OpenCode's global config directory relative to `HOME` (`$XDG_CONFIG_HOME/opencode`). */
export const OPENCODE_CONFIG_DIR_REL = ".config/opencode";
/** Context window and output cap announced for the policy model. */
export const OPENCODE_CONTEXT_WINDOW = 131072;
export const OPENCODE_MAX_TOKENS = 16384;

/** Which of OpenCode's provider packages talks to the gateway. */
export type OpencodeWire = "chat" | "anthropic";

const PROVIDER_PACKAGES: Record<OpencodeWire, string> = {
  chat: "@ai-sdk/openai-compatible",
  anthropic: "@ai-sdk/anthropic",
};

/** The npm package and the pinned version this plugin was written against. */
const NPM_PACKAGE = "opencode-ai";
const VERSION = "1.18.33";

/**
 * `opencode.json`: one provider at the rollout's `/v1`, its one model as the default and the
 * small model, no auto-update, no sharing.
 */
export function opencodeConfig(o: LaunchOptions, wire: OpencodeWire = "chat"): unknown {
  return {
    $schema: "https://opencode.ai/config.json",
    provider: {
      [OPENCODE_PROVIDER]: {
        npm: PROVIDER_PACKAGES[wire],
        name: "rollgate",
        options: { baseURL: `${rolloutBaseUrl(o)}/v1`, apiKey: `{env:${OPENCODE_TOKEN_ENV}}` },
        models: {
          [o.model]: {
            name: o.model,
            tool_call: true,
            reasoning: true,
            limit: { context: OPENCODE_CONTEXT_WINDOW, output: OPENCODE_MAX_TOKENS },
          },
        },
      },
    },
    model: `${OPENCODE_PROVIDER}/${o.model}`,
    small_model: `${OPENCODE_PROVIDER}/${o.model}`,
    autoupdate: false,
    share: "disabled",
  };
}

/**
 * OpenCode installs `@opencode-ai/plugin` from the npm registry into every config directory it
 * loads, unless the directory already has a `node_modules` and a lockfile whose root lists every
 * dependency of its `package.json`. These three files make that check pass, so a run makes no
 * registry request (the plugin package itself is only needed by user plugins, of which there are
 * none).
 */
export function opencodePluginStub(): Record<string, string> {
  const deps = { dependencies: { "@opencode-ai/plugin": VERSION } };
  return {
    "package.json": JSON.stringify(deps) + "\n",
    "package-lock.json": JSON.stringify({ packages: { "": deps } }) + "\n",
    "node_modules/.keep": "",
  };
}

interface OpencodePart {
  type?: string;
  text?: string;
  reason?: string;
  messageID?: string;
}

export const opencode: Harness = {
  name: "opencode",
  protocol: "chat",
  registry: "npm",
  package: NPM_PACKAGE,
  version: VERSION,
  bin: "opencode",
  shell: { kind: "tool", name: "bash", argument: "command" },
  install: [npmInstallLine(NPM_PACKAGE, VERSION)],
  quirks: [
    "POST {baseURL}/chat/completions, always stream:true with stream_options.include_usage; " +
    "x-session-id and x-session-affinity headers carry OpenCode's session id",
    "tool-call arguments re-serialised on echo (compact JSON); reasoning_content echoed verbatim",
    "without --title a tool-less title request (its own system prompt, reasoning_effort low) is " +
    "sent before or alongside the first turn: a side request; --title is set here",
    "a prompt argument containing a space reaches the model wrapped in double quotes (inner " +
    "quotes escaped); a word that looks like a number crashes `run` (G.includes is not a function)",
    "retries 5xx/408/409/429 five times (2, 4, 8, 16, 30 s; Retry-After honoured), identical " +
    "bodies, not configurable; exit code 1 and an error event after the last",
    "installs @opencode-ai/plugin from npm into its config dir and fetches models.dev unless " +
    "stopped (plugin stub files, OPENCODE_DISABLE_MODELS_FETCH)",
  ],

  configFiles(o: LaunchOptions): Record<string, string> {
    const files: Record<string, string> = {
      [`${OPENCODE_CONFIG_DIR_REL}/opencode.json`]: JSON.stringify(opencodeConfig(o), null, 2) +
        "\n",
    };
    for (const [rel, text] of Object.entries(opencodePluginStub())) {
      files[`${OPENCODE_CONFIG_DIR_REL}/${rel}`] = text;
    }
    return files;
  },

  async prepare(home: string, o: LaunchOptions): Promise<void> {
    await writeConfigFiles(this, home, o);
  },

  env(o: LaunchOptions): Record<string, string> {
    return {
      ...commonEnv(o),
      XDG_CONFIG_HOME: `${o.home}/.config`,
      XDG_DATA_HOME: `${o.home}/.local/share`,
      XDG_CACHE_HOME: `${o.home}/.cache`,
      XDG_STATE_HOME: `${o.home}/.local/state`,
      [OPENCODE_TOKEN_ENV]: o.token,
      // Zero egress: no models.dev catalogue, no update check, no language-server downloads.
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_SHARE: "1",
    };
  },

  args(prompt: string, o: LaunchOptions): string[] {
    return [
      "run",
      "--format",
      "json",
      "--auto",
      "--model",
      `${OPENCODE_PROVIDER}/${o.model}`,
      "--title",
      o.rolloutId,
      "--",
      prompt,
    ];
  },

  /**
   * An `error` event means failure (OpenCode prints it after its last retry, exit code 1);
   * success is a last `step_finish` whose reason is `stop`. The final text is the text of that
   * step's message.
   */
  completion(stdout: string, exitCode: number): Completion {
    const events = jsonLines(stdout);
    const error = events.findLast((e) => e.type === "error");
    if (error) {
      const data = error.error as { data?: { message?: string }; name?: string } | undefined;
      return { ok: false, error: `${data?.name ?? "error"}: ${data?.data?.message ?? "unknown"}` };
    }
    const finish = events.findLast((e) => e.type === "step_finish")?.part as
      | OpencodePart
      | undefined;
    if (!finish) return { ok: false, error: `no step_finish event (exit code ${exitCode})` };
    const finalText = events
      .map((e) => e.part as OpencodePart | undefined)
      .filter((p) => p?.type === "text" && p.messageID === finish.messageID)
      .map((p) => p!.text ?? "")
      .join("");
    if (finish.reason !== "stop") {
      return { ok: false, finalText, error: `the last step ended with ${finish.reason}` };
    }
    if (exitCode !== 0) return { ok: false, finalText, error: `exit code ${exitCode}` };
    return { ok: true, finalText };
  },
};
