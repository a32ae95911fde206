/**
 * mini-swe-agent (PyPI `mini-swe-agent`): OpenAI Chat Completions through litellm, with text
 * actions and no tools (`litellm_textbased` model class, the `mini_textbased.yaml` prompts): each
 * reply holds one fenced ```` ```mswea_bash_command ```` block, run in a fresh subshell, and its
 * output comes back as the next user message. The run ends when a command's output starts with
 * `COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.
 *
 * Launch: `mini -c mini_textbased.yaml -c <HOME>/.config/mini-swe-agent/rollgate.yaml -y
 * --exit-immediately -o <trajectory> -t <prompt>` with stdin at `/dev/null`. Its stdout is the
 * human-readable transcript, so the outcome is read from the trajectory file it saves
 * ({@link Harness.resultFile}): `info.exit_status` `Submitted` is success.
 *
 * The CLI lives in the sandbox's own Python: locally, the virtual environment `agents/venv`
 * (made with the host's `/usr/bin/python3`, which the local sandbox shares); elsewhere, the
 * install line makes one under `/opt/rollgate` (or bake it into the image).
 *
 * @module
 */
import {
  commonEnv,
  type Completion,
  type Harness,
  type LaunchOptions,
  pipInstallLine,
  rolloutBaseUrl,
  writeConfigFiles,
} from "./harness.ts";

/** mini-swe-agent's global config directory relative to `HOME` (`MSWEA_GLOBAL_CONFIG_DIR`). */
export const MINI_CONFIG_DIR_REL = ".config/mini-swe-agent";
/** The config rollgate adds on top of `mini_textbased.yaml`, relative to `HOME`. */
export const MINI_CONFIG_REL = `${MINI_CONFIG_DIR_REL}/rollgate.yaml`;
/** The trajectory the run saves, relative to `HOME`. */
export const MINI_TRAJECTORY_REL = `${MINI_CONFIG_DIR_REL}/trajectory.json`;
/** The fenced-block info string of an action, and the line that ends a run. */
export const MINI_FENCE = "mswea_bash_command";
export const MINI_SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/** The PyPI package and the pinned version this plugin was written against. */
const PYPI_PACKAGE = "mini-swe-agent";
const VERSION = "2.4.6";
/** What the install line pins: the agent and the two packages that shape its requests. */
const WIRE_PINS = [`${PYPI_PACKAGE}==${VERSION}`, "litellm==1.106.2", "openai==2.54.0"];

/**
 * The config merged over `mini_textbased.yaml` (JSON, which YAML reads as is): yolo mode, no
 * cost limit (litellm knows no price for the policy), the rollout's `/v1` as litellm's OpenAI
 * base URL, text actions.
 */
export function miniConfig(o: LaunchOptions): unknown {
  return {
    agent: { mode: "yolo", confirm_exit: false, cost_limit: 0 },
    model: {
      model_name: `openai/${o.model}`,
      model_class: "litellm_textbased",
      cost_tracking: "ignore_errors",
      model_kwargs: { api_base: `${rolloutBaseUrl(o)}/v1` },
    },
    environment: { environment_class: "local" },
  };
}

interface MiniMessage {
  role?: string;
  content?: unknown;
}

interface MiniTrajectory {
  info?: { exit_status?: string; submission?: string };
  messages?: MiniMessage[];
}

export const miniSweAgent: Harness = {
  name: "mini-swe-agent",
  protocol: "chat",
  registry: "pypi",
  package: PYPI_PACKAGE,
  version: VERSION,
  bin: "mini",
  shell: { kind: "text", fence: MINI_FENCE, submit: MINI_SUBMIT },
  install: [pipInstallLine("mini-swe-agent", "mini", WIRE_PINS)],
  resultFile: MINI_TRAJECTORY_REL,
  quirks: [
    "POST {api_base}/chat/completions with stream:false and only model + messages (no tools, no " +
    "max_tokens): a plain JSON answer",
    "no tools: actions are fenced ```mswea_bash_command blocks in the text; observations come " +
    "back as user messages (<returncode>…</returncode><output>…</output>)",
    "assistant turns echoed as litellm's message dump: content and reasoning_content verbatim, " +
    "plus provider_specific_fields {refusal:null}",
    "a reply without exactly one action gets a 'Format error' user message; three in a row end " +
    "the run (RepeatedFormatError)",
    "retries a failed call up to 10 times with 4-60 s backoff unless " +
    "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT is set (1 here); the exit code is 0 even then: the " +
    "trajectory's exit_status decides",
    "litellm fetches its model price map from GitHub at import unless " +
    "LITELLM_LOCAL_MODEL_COST_MAP=True (set)",
  ],

  configFiles(o: LaunchOptions): Record<string, string> {
    return { [MINI_CONFIG_REL]: JSON.stringify(miniConfig(o), null, 2) + "\n" };
  },

  async prepare(home: string, o: LaunchOptions): Promise<void> {
    await writeConfigFiles(this, home, o);
  },

  env(o: LaunchOptions): Record<string, string> {
    return {
      ...commonEnv(o),
      OPENAI_API_KEY: o.token,
      MSWEA_GLOBAL_CONFIG_DIR: `${o.home}/${MINI_CONFIG_DIR_REL}`,
      // No first-run setup prompt, no banner.
      MSWEA_CONFIGURED: "true",
      MSWEA_SILENT_STARTUP: "1",
      // One attempt per step: a gateway error surfaces at once instead of after ~6 minutes.
      MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT: "1",
      // Zero egress: litellm's bundled price map instead of GitHub's.
      LITELLM_LOCAL_MODEL_COST_MAP: "True",
    };
  },

  args(prompt: string, o: LaunchOptions): string[] {
    return [
      "-c",
      "mini_textbased.yaml",
      "-c",
      `${o.home}/${MINI_CONFIG_REL}`,
      "-y",
      "--exit-immediately",
      "-o",
      `${o.home}/${MINI_TRAJECTORY_REL}`,
      "-t",
      prompt,
    ];
  },

  /**
   * The saved trajectory decides: `exit_status` `Submitted` is success, and the submission (the
   * submitting command's output after its first line) is the final text. Anything else
   * (`LimitsExceeded`, `RepeatedFormatError`, an exception's name) is a failure, explained by the
   * trajectory's last message.
   */
  completion(stdout: string, exitCode: number, result?: string): Completion {
    let trajectory: MiniTrajectory;
    try {
      trajectory = JSON.parse(result ?? "");
    } catch {
      const tail = stdout.trim().split("\n").slice(-3).join(" | ");
      return { ok: false, error: `no trajectory written (exit code ${exitCode}): ${tail}` };
    }
    const status = trajectory.info?.exit_status ?? "";
    const finalText = trajectory.info?.submission;
    if (status === "Submitted") return { ok: true, finalText };
    const last = trajectory.messages?.at(-1)?.content;
    const why = typeof last === "string" && last ? `: ${last.split("\n")[0]}` : "";
    return { ok: false, finalText, error: `${status || "no exit status"}${why}` };
  },
};
