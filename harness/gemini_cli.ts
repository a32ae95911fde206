/**
 * Gemini CLI (`@google/gemini-cli`): Google's `generateContent` protocol, configured by
 * `~/.gemini/settings.json` (API-key auth, no usage statistics, no telemetry, no update checks, no
 * loop detection) and the environment (`GOOGLE_GEMINI_BASE_URL` = the rollout's base URL, the
 * token as `GEMINI_API_KEY`, the workspace trusted).
 *
 * Launch: `gemini -p <prompt> --output-format stream-json -m <model> --approval-mode yolo` with
 * stdin at `/dev/null`. Success is read from the final `result` event of the stream-json output.
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

/** `~/.gemini` relative to `HOME`. */
export const GEMINI_DIR_REL = ".gemini";

/**
 * `settings.json`: the Gemini API key as the auth method (the rollout's token is the key), no
 * usage statistics (Clearcut, `play.googleapis.com`) or telemetry, no update check, and no loop
 * detection: after a while it asks the model, as a side request with its own prompt, whether the
 * agent is looping, and it cuts a run short on a heuristic; the policy's own behaviour is what is
 * being trained. One attempt per request: the runner's budget bounds a run and the gateway's
 * errors surface at once instead of after ten backed-off re-sends.
 */
export function geminiSettings(): unknown {
  return {
    security: { auth: { selectedType: "gemini-api-key" } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
    model: { disableLoopDetection: true, skipNextSpeakerCheck: true },
  };
}

interface GeminiEvent {
  type?: string;
  role?: string;
  content?: string;
  status?: string;
  error?: { type?: string; message?: string };
  message?: string;
}

/** The npm package and the pinned version this plugin was written against. */
const NPM_PACKAGE = "@google/gemini-cli";
const VERSION = "0.61.0";

export const geminiCli: Harness = {
  name: "gemini-cli",
  protocol: "gemini",
  registry: "npm",
  package: NPM_PACKAGE,
  version: VERSION,
  bin: "gemini",
  shell: {
    kind: "tool",
    name: "run_shell_command",
    argument: "command",
    refusesSubstitution: true,
  },
  install: [npmInstallLine(NPM_PACKAGE, VERSION)],
  quirks: [
    "POST {GOOGLE_GEMINI_BASE_URL}/v1beta/models/<model>:streamGenerateContent?alt=sse, the key " +
    "in x-goog-api-key; no session header; plain http only to localhost/127.0.0.1",
    "the SSE parser only accepts `data:` lines from the first byte: no comment lines (no " +
    "`: keep-alive`), keep-alives must be data chunks",
    "thought parts are dropped from the history it sends back; a thoughtSignature on the first " +
    "text part or function call is echoed verbatim (the gateway carries the reasoning in it)",
    "functionCall ids echoed verbatim, and as functionResponse.id; tool output sent as " +
    "{output: '<untrusted_context>\\nOutput: …\\nProcess Group PGID: …'}",
    "the first user content starts with a <session_context> part (date, OS, workspace tree), " +
    "then the prompt; systemInstruction ~32 KB, 15 function declarations",
    "retries failed requests up to 10 times with backoff unless general.maxAttempts (1 here)",
    "untrusted folders turn yolo into default approval: GEMINI_CLI_TRUST_WORKSPACE=true",
    "run_shell_command refuses a command holding $(, a backtick, <( or >( outside single " +
    "quotes, heredoc bodies included ('Command injection detected')",
  ],

  configFiles(): Record<string, string> {
    return {
      [`${GEMINI_DIR_REL}/settings.json`]: JSON.stringify(geminiSettings(), null, 2) + "\n",
    };
  },

  async prepare(home: string, o: LaunchOptions): Promise<void> {
    await writeConfigFiles(this, home, o);
  },

  env(o: LaunchOptions): Record<string, string> {
    return {
      ...commonEnv(o),
      GOOGLE_GEMINI_BASE_URL: rolloutBaseUrl(o),
      GEMINI_API_KEY: o.token,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    };
  },

  args(prompt: string, o: LaunchOptions): string[] {
    return [
      "-p",
      prompt,
      "--output-format",
      "stream-json",
      "-m",
      o.model,
      "--approval-mode",
      "yolo",
    ];
  },

  /**
   * The stream-json `result` event decides (`status: "success"`); the final text is what the
   * assistant said after the last tool result.
   */
  completion(stdout: string, exitCode: number): Completion {
    const events = jsonLines(stdout) as GeminiEvent[];
    let finalText = "";
    let lastError: string | undefined;
    for (const e of events) {
      if (e.type === "tool_use" || e.type === "tool_result") finalText = "";
      if (e.type === "message" && e.role === "assistant") finalText += e.content ?? "";
      if (e.type === "error") lastError = e.message ?? e.error?.message ?? "error";
    }
    const result = events.findLast((e) => e.type === "result");
    const text = finalText === "" ? undefined : finalText;
    if (!result) {
      const why = lastError ?? `no result event in the output (exit code ${exitCode})`;
      return { ok: false, finalText: text, error: why };
    }
    if (result.status !== "success") {
      const why = result.error?.message ?? lastError ?? "(no message)";
      return { ok: false, finalText: text, error: `${result.status ?? "error"}: ${why}` };
    }
    if (exitCode !== 0) return { ok: false, finalText: text, error: `exit code ${exitCode}` };
    return { ok: true, finalText: text };
  },
};
