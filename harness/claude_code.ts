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
  prepareHome,
  rolloutBaseUrl,
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

export const claudeCode: Harness = {
  name: "claude-code",
  protocol: "anthropic",
  npmPackage: "@anthropic-ai/claude-code",
  version: "2.1.330",
  bin: "claude",
  shellTool: { name: "Bash", argument: "command" },

  /** Nothing to write: Claude Code is configured entirely by its environment. */
  async prepare(home: string): Promise<void> {
    await prepareHome(home);
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
