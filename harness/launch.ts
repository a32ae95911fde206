/**
 * One run of a harness inside a sandbox, as data: the config files to write (absolute paths
 * inside the sandbox), the environment, and ONE shell command that creates the scratch
 * directory, installs the CLI when it is missing (the harness's `install` lines), and `exec`s the
 * CLI with stdin at `/dev/null`. Pure: a sandbox runner writes `files` with `sandbox.writeFile`
 * and runs `command` with `sandbox.exec(command, { env, timeoutMs })`.
 *
 * @example
 * ```ts
 * import { codex, sandboxLaunch } from "./mod.ts";
 * import type { Sandbox } from "../sandbox/mod.ts";
 * declare const sbx: Sandbox;
 * declare const rollout: { id: string; token: string };
 *
 * const run = sandboxLaunch(codex, "Fix the bug", {
 *   gatewayUrl: sbx.gatewayUrl,
 *   rolloutId: rollout.id,
 *   token: rollout.token,
 *   model: "rollgate-policy",
 *   workdir: sbx.workdir,
 *   home: "/home/agent",
 * });
 * for (const [path, text] of Object.entries(run.files)) await sbx.writeFile(path, text);
 * const r = await sbx.exec(run.command, { env: run.env, timeoutMs: 600_000 });
 * codex.completion(r.stdout, r.exitCode);
 * ```
 *
 * @module
 */
import { type Harness, type LaunchOptions, scratchTmp } from "./harness.ts";

/** Exit code of the launch command when the CLI is missing and could not be installed. */
export const CLI_MISSING_EXIT_CODE = 127;

/** Marker the launch command prints to stderr before {@link CLI_MISSING_EXIT_CODE}. */
export const CLI_MISSING_MARKER = "rollgate: agent CLI unavailable:";

/** What a sandbox runner needs for one run. */
export interface SandboxLaunch {
  /** Absolute path inside the sandbox → content. */
  files: Record<string, string>;
  /** The harness's environment (PATH stays the sandbox's). */
  env: Record<string, string>;
  /** One shell command: scratch dir, install if missing, `exec` the CLI `< /dev/null`. */
  command: string;
}

/** Quotes `s` as one POSIX shell word. */
export function shellWord(s: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * The shell snippet that makes sure `h.bin` is on `PATH`: nothing when it is; else the install
 * lines (output to stderr, so the CLI's JSON stream on stdout stays clean), then a clear message
 * and {@link CLI_MISSING_EXIT_CODE} if it is still missing.
 */
export function ensureCliScript(h: Harness): string {
  const bin = shellWord(h.bin);
  const missing = (why: string) =>
    `{ echo ${shellWord(`${CLI_MISSING_MARKER} ${why}`)} >&2; exit ${CLI_MISSING_EXIT_CODE}; }`;
  const install = h.install.length
    ? `( ${h.install.join(" && ")} ) >&2 || ${
      missing(`installing ${h.package}@${h.version} failed (no network in the sandbox?)`)
    }; `
    : "";
  return `if ! command -v ${bin} >/dev/null 2>&1; then ${install}command -v ${bin} >/dev/null ` +
    `2>&1 || ${
      missing(`${h.bin} is not on PATH; bake it into the image (${h.install[0] ?? ""})`)
    }; fi`;
}

/** Files, environment and command for running `h` once on `prompt` inside a sandbox. */
export function sandboxLaunch(
  h: Harness,
  prompt: string,
  o: LaunchOptions,
  extraEnv: Record<string, string> = {},
): SandboxLaunch {
  const home = o.home.replace(/(.)\/+$/, "$1");
  const lo = { ...o, home };
  const files: Record<string, string> = {};
  for (const [rel, text] of Object.entries(h.configFiles(lo))) files[`${home}/${rel}`] = text;
  const argv = [h.bin, ...h.args(prompt, lo)].map(shellWord).join(" ");
  const command = [
    `mkdir -p ${shellWord(scratchTmp(home))}`,
    // A result file left by an earlier run in this HOME is not this run's outcome.
    ...(h.resultFile ? [`rm -f ${shellWord(`${home}/${h.resultFile}`)}`] : []),
    ensureCliScript(h),
    `cd ${shellWord(lo.workdir)}`,
    `exec ${argv} < /dev/null`,
  ].join("\n");
  return { files, env: { ...h.env(lo), ...extraEnv }, command };
}
