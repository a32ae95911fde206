/**
 * The harness plugin contract: everything rollgate must know to run one coding-agent CLI against a
 * rollout — which wire protocol it speaks, which package and binary it is, how to configure it
 * (files under its `HOME`, environment), how to launch it non-interactively with zero outside
 * traffic, and how to tell from its output whether the run succeeded.
 *
 * Plugins are pure descriptions: config files as data ({@link Harness.configFiles}), environment,
 * arguments, install commands, completion parsing. Running them is up to a runner: `run_local.ts`
 * for a plain local subprocess (`prepare` writes the config files on the host), `launch.ts` for a
 * sandbox (the runner writes the same files with `sandbox.writeFile` and runs one shell command
 * inside; see `runner/`). The facts behind each plugin are in `docs/agent-clients.md`.
 *
 * @module
 */

/** The wire protocol a CLI speaks to its base URL. */
export type WireProtocol = "anthropic" | "responses" | "chat" | "gemini";

/** Everything a harness needs to point one run of its CLI at one rollout. */
export interface LaunchOptions {
  /**
   * scheme://host:port of the gateway as seen from where the CLI runs, e.g. `http://127.0.0.1:7860`
   * (a sandbox's bridge: `http://127.0.0.1:8787`).
   */
  gatewayUrl: string;
  /** The rollout every call of this run belongs to. */
  rolloutId: string;
  /** The rollout's token; the CLI presents it as its API key. */
  token: string;
  /** The model id the CLI puts in its requests (any string; e.g. `rollgate-policy`). */
  model: string;
  /** The working directory the agent works in (a git repository). */
  workdir: string;
  /** A throwaway `HOME` for this run, as seen by the CLI; config files go below it. */
  home: string;
}

/** What a run's output says about its success. */
export interface Completion {
  ok: boolean;
  /** The agent's final answer text, when it produced one. */
  finalText?: string;
  /** Why the run counts as failed. */
  error?: string;
}

/** The name and main argument of a CLI's shell tool, e.g. `Bash` / `command`. */
export interface ShellTool {
  kind: "tool";
  name: string;
  argument: string;
  /**
   * The CLI refuses a command with command-substitution syntax (`$(`, backticks, `<(`, `>(`)
   * outside single quotes, heredoc bodies included (the Gemini CLI): data goes in encoded.
   */
  refusesSubstitution?: boolean;
}

/**
 * A shell command written in the reply text of an agent that offers no tools (mini-swe-agent):
 * one fenced block whose info string is `fence`, e.g. ```` ```mswea_bash_command ````. The run ends
 * when a command's output starts with the line `submit`; the lines after it are the agent's final
 * answer.
 */
export interface TextShell {
  kind: "text";
  fence: string;
  submit: string;
}

/** How the agent runs a shell command: a call of its shell tool, or a block in its text. */
export type Shell = ShellTool | TextShell;

/** Where a CLI is installed from: npm (a `bin` of a package) or PyPI (a console script). */
export type Registry = "npm" | "pypi";

/** One agent CLI, described. */
export interface Harness {
  /** The CLI's name, equal to its key in the registry (`HARNESSES` in `mod.ts`). */
  readonly name: string;
  readonly protocol: WireProtocol;
  /** The registry `package` comes from. */
  readonly registry: Registry;
  /** The npm or PyPI package that provides the CLI. */
  readonly package: string;
  /** The pinned version of `package` the plugin was written against. */
  readonly version: string;
  /**
   * Executable name: in `agents/node_modules/.bin` (npm) or `agents/venv/bin` (PyPI), see
   * `agentBinDir`.
   */
  readonly bin: string;
  /** How the agent runs shell commands. */
  readonly shell: Shell;
  /**
   * Shell commands (run in order by the sandbox's shell, network needed) that install the pinned
   * CLI in a sandbox that lacks `bin` on its `PATH`, e.g. `npm install -g <package>@<version>`.
   * Image and template builders run the same lines. The local backend needs none: it binds this
   * repository's `agents/node_modules` and `agents/venv` read-only and puts their executables on
   * `PATH`.
   */
  readonly install: readonly string[];
  /**
   * A file (path relative to `HOME`) the CLI writes its outcome to, for a CLI whose stdout is not
   * a machine-readable event stream (mini-swe-agent's trajectory). Runners read it after the run
   * and pass its text to {@link completion}.
   */
  readonly resultFile?: string;
  /**
   * Documentation: what this CLI sends that the gateway normalizes or must tolerate (history
   * echo, retries, roles, ids). The facts are in `docs/agent-clients.md`; the rules live in
   * `gateway/` and `trajectory/`, not here.
   */
  readonly quirks: readonly string[];
  /**
   * The CLI's config files for one run: path relative to `HOME` → content. Pure, so a runner can
   * write them anywhere (`prepare` on the host, `sandbox.writeFile` inside a sandbox).
   */
  configFiles(o: LaunchOptions): Record<string, string>;
  /**
   * Writes {@link configFiles} below `home` (creating directories, and `home`'s temporary
   * directory). Host-side counterpart of what a sandbox runner does.
   */
  prepare(home: string, o: LaunchOptions): Promise<void>;
  /**
   * The CLI's environment: base URL, token, every switch that stops outside traffic, `HOME` and
   * friends. `PATH` is the runner's business.
   */
  env(o: LaunchOptions): Record<string, string>;
  /**
   * Command-line arguments for one non-interactive run with a JSON event stream on stdout (or,
   * for a harness with a {@link resultFile}, its outcome in that file).
   */
  args(prompt: string, o: LaunchOptions): string[];
  /**
   * Success or failure, from the CLI's stdout (its JSON event stream), exit code and, for a
   * harness with a {@link resultFile}, that file's text (`undefined` when it was not written).
   */
  completion(stdout: string, exitCode: number, result?: string): Completion;
}

/**
 * The install line for an npm-distributed CLI: a global install of the exact pinned version
 * (install scripts kept: Claude Code's postinstall links its native binary).
 */
export function npmInstallLine(npmPackage: string, version: string): string {
  return `npm install -g --no-fund --no-audit --loglevel=error ${npmPackage}@${version}`;
}

/**
 * The install line for a PyPI-distributed CLI: a virtual environment of the sandbox's own
 * `python3` under `/opt/rollgate/<venv>` holding the pinned requirements, and its `bin` linked into
 * `/usr/local/bin` (as writable as npm's global prefix, which the npm lines need too).
 */
export function pipInstallLine(venv: string, bin: string, requirements: readonly string[]): string {
  const dir = `/opt/rollgate/${venv}`;
  return `python3 -m venv ${dir} && ${dir}/bin/pip install --quiet --disable-pip-version-check ` +
    `${requirements.join(" ")} && ln -sf ${dir}/bin/${bin} /usr/local/bin/${bin}`;
}

/** The rollout's agent base URL: `<gateway>/rollout/<id>` (no `/v1`). */
export function rolloutBaseUrl(o: LaunchOptions): string {
  return `${o.gatewayUrl.replace(/\/+$/, "")}/rollout/${encodeURIComponent(o.rolloutId)}`;
}

/** The run's temporary directory, inside its `HOME` (so nothing lands in the shared `/tmp`). */
export function scratchTmp(home: string): string {
  return `${home}/tmp`;
}

/**
 * Environment every CLI gets: its own `HOME` and `TMPDIR`, a dumb terminal, UTF-8, no colors.
 */
export function commonEnv(o: LaunchOptions): Record<string, string> {
  return { HOME: o.home, TMPDIR: scratchTmp(o.home), TERM: "dumb", LANG: "C.UTF-8", NO_COLOR: "1" };
}

/** Creates `home` and its temporary directory; every `prepare` starts with this. */
export async function prepareHome(home: string): Promise<void> {
  await Deno.mkdir(scratchTmp(home), { recursive: true });
}

/**
 * Parses a JSON-lines stream, skipping lines that are not JSON objects (CLIs interleave the odd
 * plain-text line).
 */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  for (const line of stdout.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const v = JSON.parse(t);
      if (v && typeof v === "object" && !Array.isArray(v)) events.push(v);
    } catch { /* not an event */ }
  }
  return events;
}

/** A TOML basic string (JSON's escapes are a subset TOML accepts for these values). */
export function tomlString(s: string): string {
  return JSON.stringify(s);
}

/**
 * The shared `prepare`: creates `home` and its temporary directory, then writes the harness's
 * {@link Harness.configFiles} below it.
 */
export async function writeConfigFiles(
  h: Pick<Harness, "configFiles">,
  home: string,
  o: LaunchOptions,
): Promise<void> {
  await prepareHome(home);
  for (const [rel, text] of Object.entries(h.configFiles(o))) {
    await writeFileWithDirs(`${home.replace(/\/+$/, "")}/${rel}`, text);
  }
}

/** Writes `text` to `path`, creating the parent directory. */
export async function writeFileWithDirs(path: string, text: string): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  if (dir) await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(path, text);
}
