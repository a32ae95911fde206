/**
 * pi (`@mariozechner/pi-coding-agent`): OpenAI Chat Completions, configured by `models.json` and
 * `settings.json` in `$PI_CODING_AGENT_DIR`.
 *
 * Launch: `pi -p --mode json --no-session --provider rollgate --model <id> <prompt>` with stdin at
 * `/dev/null` (an open stdin blocks pi before its first request). pi's exit code is 0 even when
 * every call failed, so success is read from the JSON event stream only.
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

/** The provider name in `models.json` (and on the command line). */
export const PI_PROVIDER = "rollgate";
/** The environment variable `apiKey` names. */
export const PI_TOKEN_ENV = "ROLLGATE_TOKEN";
/** Context window and output cap announced for the policy model. */
export const PI_CONTEXT_WINDOW = 131072;
export const PI_MAX_TOKENS = 16384;

/** `$PI_CODING_AGENT_DIR` relative to `HOME`. */
export const PI_AGENT_DIR_REL = ".pi/agent";

/** `$PI_CODING_AGENT_DIR` for a run. */
export function piAgentDir(home: string): string {
  return `${home}/${PI_AGENT_DIR_REL}`;
}

/**
 * `models.json`: one provider at the rollout's `/v1`. `reasoning: true` makes pi send its system
 * prompt as `developer` (mapped to `system` by the gateway) and echo `reasoning_content`.
 */
export function piModels(o: LaunchOptions): unknown {
  return {
    providers: {
      [PI_PROVIDER]: {
        baseUrl: `${rolloutBaseUrl(o)}/v1`,
        api: "openai-completions",
        apiKey: PI_TOKEN_ENV,
        models: [{
          id: o.model,
          reasoning: true,
          contextWindow: PI_CONTEXT_WINDOW,
          maxTokens: PI_MAX_TOKENS,
        }],
      },
    },
  };
}

/**
 * `settings.json`: no install ping, and no client retries (the gateway's errors surface at once
 * instead of after 12 identical requests); a generous request timeout for a busy trainer.
 */
export function piSettings(): unknown {
  return {
    enableInstallTelemetry: false,
    retry: { enabled: false, provider: { maxRetries: 0, timeoutMs: 3_600_000 } },
  };
}

interface PiContent {
  type?: string;
  text?: string;
}

interface PiMessage {
  role?: string;
  content?: PiContent[] | string;
  stopReason?: string;
  errorMessage?: string;
}

function textOf(m: PiMessage): string {
  if (typeof m.content === "string") return m.content;
  return (m.content ?? []).filter((c) => c.type === "text").map((c) => c.text ?? "").join("");
}

/** The npm package and the pinned version this plugin was written against. */
const NPM_PACKAGE = "@mariozechner/pi-coding-agent";
const VERSION = "0.73.1";

export const pi: Harness = {
  name: "pi",
  protocol: "chat",
  registry: "npm",
  package: NPM_PACKAGE,
  version: VERSION,
  bin: "pi",
  shell: { kind: "tool", name: "bash", argument: "command" },
  install: [npmInstallLine(NPM_PACKAGE, VERSION)],
  quirks: [
    "POST {baseUrl}/chat/completions with stream:true and stream_options.include_usage; a JSON " +
    "reply gives a silently empty answer (exit 0)",
    "system prompt sent with role developer for reasoning models (mapped to system)",
    "tool-call arguments re-serialised on echo (compact JSON.stringify): compared as parsed " +
    "JSON, never re-tokenized",
    "reasoning_content echoed back on assistant messages",
    "exit code 0 even when every call failed: success is read from the --mode json events",
    "client retries (3 SDK tries x 4 rounds) switched off in settings.json",
  ],

  configFiles(o: LaunchOptions): Record<string, string> {
    return {
      [`${PI_AGENT_DIR_REL}/models.json`]: JSON.stringify(piModels(o), null, 2) + "\n",
      [`${PI_AGENT_DIR_REL}/settings.json`]: JSON.stringify(piSettings(), null, 2) + "\n",
    };
  },

  async prepare(home: string, o: LaunchOptions): Promise<void> {
    await writeConfigFiles(this, home, o);
  },

  env(o: LaunchOptions): Record<string, string> {
    return {
      ...commonEnv(o),
      PI_CODING_AGENT_DIR: piAgentDir(o.home),
      [PI_TOKEN_ENV]: o.token,
      // No startup network operations (version, package checks, install ping).
      PI_OFFLINE: "1",
      PI_SKIP_VERSION_CHECK: "1",
      PI_TELEMETRY: "0",
    };
  },

  args(prompt: string, o: LaunchOptions): string[] {
    return [
      "-p",
      "--mode",
      "json",
      "--no-session",
      "--provider",
      PI_PROVIDER,
      "--model",
      o.model,
      prompt,
    ];
  },

  /**
   * Failure: no `agent_end`, `auto_retry_end` with `success:false`, or a last assistant message
   * that stopped with an error or has no content at all. The exit code is ignored.
   */
  completion(stdout: string, _exitCode: number): Completion {
    const events = jsonLines(stdout);
    const retryFailed = events.findLast((e) => e.type === "auto_retry_end" && e.success === false);
    if (retryFailed) {
      return {
        ok: false,
        error: `retries exhausted: ${retryFailed.finalError ?? "unknown error"}`,
      };
    }
    const end = events.findLast((e) => e.type === "agent_end");
    if (!end) return { ok: false, error: "no agent_end event in the output" };
    const messages = (end.messages ?? []) as PiMessage[];
    const last = messages.findLast((m) => m.role === "assistant");
    if (!last) return { ok: false, error: "no assistant message" };
    const finalText = textOf(last);
    if (last.stopReason === "error" || last.stopReason === "aborted") {
      return { ok: false, finalText, error: last.errorMessage ?? `stopReason ${last.stopReason}` };
    }
    const empty = typeof last.content === "string" ? last.content === "" : !last.content?.length;
    if (empty) return { ok: false, error: "the last assistant message is empty" };
    return { ok: true, finalText };
  },
};
