/**
 * Qwen Code (`@qwen-code/qwen-code`): OpenAI Chat Completions, configured by
 * `~/.qwen/settings.json` (auth type, no statistics, no update checks, retries and timeouts) and
 * the `OPENAI_*` environment (base URL, key, model).
 *
 * Launch: `qwen --approval-mode yolo --output-format stream-json <prompt>` with stdin at
 * `/dev/null` (stdin is appended to the prompt otherwise). Success is read from the final
 * `result` event of the stream-json output.
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

/** `~/.qwen` relative to `HOME`. */
export const QWEN_DIR_REL = ".qwen";

/**
 * `settings.json`: the OpenAI-compatible auth type, no usage statistics (they go to Alibaba RUM
 * otherwise), no telemetry, no update check, no memory agents; no SDK retries and no idle-stream
 * guard (a trainer may think longer than the default 240 s between two chunks; the runner's budget
 * bounds a run).
 */
export function qwenSettings(): unknown {
  return {
    security: { auth: { selectedType: "openai" } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false },
    model: { generationConfig: { maxRetries: 0, timeout: 3_600_000, streamIdleTimeoutMs: 0 } },
    // No background memory agents: after a turn they would ask the policy, as a side request
    // with their own system prompt, what to remember (racing the end of the run).
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
  };
}

interface QwenResult {
  subtype?: string;
  is_error?: boolean;
  result?: string;
  error?: { message?: string };
}

/** The npm package and the pinned version this plugin was written against. */
const NPM_PACKAGE = "@qwen-code/qwen-code";
const VERSION = "0.24.4";

export const qwenCode: Harness = {
  name: "qwen-code",
  protocol: "chat",
  registry: "npm",
  package: NPM_PACKAGE,
  version: VERSION,
  bin: "qwen",
  shell: { kind: "tool", name: "run_shell_command", argument: "command" },
  // 0.24.x declares engines.node >= 22 but runs on Node 20 (verified by the e2e and runner
  // tests); npm installs an explicit pin with an EBADENGINE warning only.
  install: [npmInstallLine(NPM_PACKAGE, VERSION)],
  quirks: [
    "POST {OPENAI_BASE_URL}/chat/completions, always stream:true with stream_options." +
    "include_usage and max_tokens 32000; no session header",
    "tool-call arguments re-serialised on echo (compact JSON); reasoning_content echoed verbatim",
    "tool results sent back as an array of text parts wrapped in 'Command: / Directory: / " +
    "Output: / Error: / Exit Code: …' lines, not raw stdout",
    "the first user message carries a <system-reminder> with the skills list before the prompt " +
    "(first request ~78 KB)",
    "retries a failed call 7 times (1.5 s doubling to ~20 s) on top of the OpenAI SDK's own " +
    "retries, which settings.json turns off; exit code 1 and result.is_error after the last",
    "sends usage statistics to Alibaba RUM unless privacy.usageStatisticsEnabled is false (set)",
    "after a turn a managed-memory agent may ask the model what to remember (its own system " +
    "prompt, a side request, racing the end of the run) unless memory.enableManagedAutoMemory " +
    "is false (set)",
  ],

  configFiles(): Record<string, string> {
    return { [`${QWEN_DIR_REL}/settings.json`]: JSON.stringify(qwenSettings(), null, 2) + "\n" };
  },

  async prepare(home: string, o: LaunchOptions): Promise<void> {
    await writeConfigFiles(this, home, o);
  },

  env(o: LaunchOptions): Record<string, string> {
    return {
      ...commonEnv(o),
      OPENAI_BASE_URL: `${rolloutBaseUrl(o)}/v1`,
      OPENAI_API_KEY: o.token,
      OPENAI_MODEL: o.model,
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    };
  },

  args(prompt: string, o: LaunchOptions): string[] {
    return [
      "--model",
      o.model,
      "--approval-mode",
      "yolo",
      "--output-format",
      "stream-json",
      prompt,
    ];
  },

  /** The stream-json `result` event decides: `subtype:"success"` and not `is_error`. */
  completion(stdout: string, exitCode: number): Completion {
    const result = jsonLines(stdout).findLast((e) => e.type === "result") as
      | QwenResult
      | undefined;
    if (!result) {
      return { ok: false, error: `no result event in the output (exit code ${exitCode})` };
    }
    const finalText = typeof result.result === "string" ? result.result : undefined;
    if (result.is_error === true || result.subtype !== "success") {
      const why = result.error?.message ?? finalText ?? "(no message)";
      return { ok: false, finalText, error: `${result.subtype ?? "error"}: ${why}` };
    }
    if (exitCode !== 0) return { ok: false, finalText, error: `exit code ${exitCode}` };
    return { ok: true, finalText };
  },
};
