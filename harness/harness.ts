/**
 * The harness plugin contract: everything rollgate must know to run one coding-agent CLI against a
 * rollout — which wire protocol it speaks, which package and binary it is, how to configure it
 * (files under its `HOME`, environment), how to launch it non-interactively with zero outside
 * traffic, and how to tell from its output whether the run succeeded.
 *
 * Plugins are pure descriptions plus config-file writers; running them is up to a runner
 * (`run_local.ts` for a plain local subprocess; a sandbox backend later). The facts behind each
 * plugin are in `reference/agent-clients.md`.
 *
 * @module
 */

/** The agent CLIs rollgate knows. */
export type HarnessName = "claude-code" | "codex" | "pi";

/** The wire protocol a CLI speaks to its base URL. */
export type WireProtocol = "anthropic" | "responses" | "chat";

/** Everything a harness needs to point one run of its CLI at one rollout. */
export interface LaunchOptions {
  /** scheme://host:port of the gateway as seen from where the CLI runs, e.g. `http://127.0.0.1:7860`. */
  gatewayUrl: string;
  /** The rollout every call of this run belongs to. */
  rolloutId: string;
  /** The rollout's token; the CLI presents it as its API key. */
  token: string;
  /** The model id the CLI puts in its requests (any string; e.g. `rollgate-policy`). */
  model: string;
  /** The working directory the agent works in (a git repository). */
  workdir: string;
  /** A throwaway `HOME` for this run; config files go below it. */
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
  name: string;
  argument: string;
}

/** One agent CLI, described. */
export interface Harness {
  readonly name: HarnessName;
  readonly protocol: WireProtocol;
  /** npm package that provides the CLI. */
  readonly npmPackage: string;
  /** The pinned version of `npmPackage` the plugin was written against. */
  readonly version: string;
  /** Executable name in `agents/node_modules/.bin`. */
  readonly bin: string;
  /** The tool the CLI offers for shell commands. */
  readonly shellTool: ShellTool;
  /** Writes the CLI's config files below `home` (creating directories as needed). */
  prepare(home: string, o: LaunchOptions): Promise<void>;
  /**
   * The CLI's environment: base URL, token, every switch that stops outside traffic, `HOME` and
   * friends. `PATH` is the runner's business.
   */
  env(o: LaunchOptions): Record<string, string>;
  /** Command-line arguments for one non-interactive run with a JSON event stream on stdout. */
  args(prompt: string, o: LaunchOptions): string[];
  /** Success or failure, from the CLI's stdout (its JSON event stream) and exit code. */
  completion(stdout: string, exitCode: number): Completion;
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

/** Writes `text` to `path`, creating the parent directory. */
export async function writeFileWithDirs(path: string, text: string): Promise<void> {
  const dir = path.slice(0, path.lastIndexOf("/"));
  if (dir) await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(path, text);
}
