/**
 * Claude Code (`@anthropic-ai/claude-code`): Anthropic Messages, configured by environment only.
 *
 * Launch: `claude -p <prompt> --output-format stream-json --verbose --model <id> --allowedTools
 * Bash` with stdin at `/dev/null`. `--allowedTools Bash` is what lets a shell call that writes
 * files run in `-p` mode as root (`--dangerously-skip-permissions` is refused for root). The
 * default tools and system prompt are kept: they are what a real run sends.
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

/**
 * Capabilities to switch off for a model id Claude Code does not know: without this it sends the
 * per-session context as a mid-conversation `role:"system"` message (list first, string later).
 */
export function modelCapabilities(model: string): string {
  return `${model}=-mid_conversation_system,-mid_conv_system,-mid_conv_tool_change`;
}

/** The final `result` event of a stream-json run, if any. */
function resultEvent(stdout: string): Record<string, unknown> | undefined {
  return jsonLines(stdout).findLast((e) => e.type === "result");
}

/** The npm package and the pinned version this plugin was written against. */
const NPM_PACKAGE = "@anthropic-ai/claude-code";
const VERSION = "2.1.330";

export const claudeCode: Harness = {
  name: "claude-code",
  protocol: "anthropic",
  registry: "npm",
  package: NPM_PACKAGE,
  version: VERSION,
  bin: "claude",
  shell: { kind: "tool", name: "Bash", argument: "command" },
  // On Node 20 an unpinned install silently picks 2.1.197 (later versions need Node 22).
  install: [npmInstallLine(NPM_PACKAGE, VERSION)],
  quirks: [
    "POST {base}/v1/messages?beta=true, always stream:true; a JSON reply makes it re-send with " +
    "stream:false (switched off by CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1)",
    "echoes thinking text and signature verbatim; drops message-level id/model/usage",
    "cache_control moves every turn and a single text block comes back as a plain string: " +
    "history is matched semantically",
    "unknown model ids get the session context as a mid-conversation role:system message unless " +
    "CLAUDE_CODE_MODEL_CAPABILITIES switches it off (set here)",
    "x-anthropic-billing-header system block unless CLAUDE_CODE_ATTRIBUTION_HEADER=0 (set here)",
    "retries 5xx up to 10 times with x-stainless-retry-count stuck at 0: identical re-sends are " +
    "answered from the recorded turn",
    "synthetic user texts ('no visible output', 'retry the tool call') after empty or malformed " +
    "policy output become ordinary user turns",
  ],

  /** Nothing to write: Claude Code is configured entirely by its environment. */
  configFiles(): Record<string, string> {
    return {};
  },

  async prepare(home: string, o: LaunchOptions): Promise<void> {
    await writeConfigFiles(this, home, o);
  },

  env(o: LaunchOptions): Record<string, string> {
    return {
      ...commonEnv(o),
      CLAUDE_CONFIG_DIR: `${o.home}/.claude`,
      ANTHROPIC_BASE_URL: rolloutBaseUrl(o),
      ANTHROPIC_AUTH_TOKEN: o.token,
      // Zero egress: this alone stopped every outside connection; the rest belt and braces.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_ERROR_REPORTING: "1",
      DISABLE_BUG_COMMAND: "1",
      // No `x-anthropic-billing-header` system block (it would reach the policy's prompt).
      CLAUDE_CODE_ATTRIBUTION_HEADER: "0",
      CLAUDE_CODE_MODEL_CAPABILITIES: modelCapabilities(o.model),
      // A broken stream should fail loudly, not be retried as a second, non-streaming call.
      CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK: "1",
    };
  },

  args(prompt: string, o: LaunchOptions): string[] {
    return [
      "-p",
      prompt,
      "--output-format",
      "stream-json",
      "--verbose",
      "--model",
      o.model,
      "--allowedTools",
      "Bash",
    ];
  },

  /**
   * The stream-json `result` event decides: `subtype:"success"` and not `is_error`. (An API error
   * ends with `subtype:"success"`, `is_error:true`, `terminal_reason:"api_error"` and the error
   * text in `result`.)
   */
  completion(stdout: string, exitCode: number): Completion {
    const result = resultEvent(stdout);
    if (!result) {
      return { ok: false, error: `no result event in the output (exit code ${exitCode})` };
    }
    const text = typeof result.result === "string" ? result.result : undefined;
    if (result.is_error === true || result.subtype !== "success") {
      const reason = result.is_error === true
        ? result.terminal_reason ?? "is_error"
        : result.subtype;
      return { ok: false, finalText: text, error: `${reason}: ${text ?? "(no message)"}` };
    }
    if (exitCode !== 0) return { ok: false, finalText: text, error: `exit code ${exitCode}` };
    return { ok: true, finalText: text };
  },
};
