/**
 * Records what the real agent CLIs send, as fixtures: each session runs one CLI through its
 * harness plugin (the exact config files, environment and arguments a rollout uses) against the
 * recording server of `fake_llm.ts`, in a fresh git repository, with an egress probe as its proxy.
 * The requests land in `gateway/agent/<protocol>/__fixtures__/<cli>-<version>.<session>.jsonl`, with
 * the run's temporary paths replaced by `<workdir>` and `<home>`; a summary line per session
 * (exit code, completion, requests, outside attempts) is printed.
 *
 * ```sh
 * deno run -A tests/recordings/record.ts                 # every session
 * deno run -A tests/recordings/record.ts qwen-code       # one CLI's sessions
 * ```
 *
 * Sessions: `scenario` (a shell command, then the answer), `retry` (the first request gets HTTP
 * 500; the Gemini CLI with its own retries on), `json-to-stream` (a plain JSON body answers the
 * first `stream:true` request, for the Gemini CLI its first `streamGenerateContent`), and for
 * OpenCode `anthropic` (the same scenario through its Anthropic provider) and `title` (without
 * `--title`, so OpenCode asks for a session title).
 *
 * @module
 */
import {
  geminiCli,
  type Harness,
  type LaunchOptions,
  miniSweAgent,
  opencode,
  OPENCODE_CONFIG_DIR_REL,
  opencodeConfig,
  opencodePluginStub,
  qwenCode,
  runLocal,
} from "../../harness/mod.ts";
import { GEMINI_DIR_REL, geminiSettings } from "../../harness/gemini_cli.ts";
import { makeWorkdir } from "../e2e/cli_scenario.ts";
import { startEgressProbe } from "../e2e/egress_probe.ts";
import { type Fault, type RecordedRequest, startFakeLlm } from "./fake_llm.ts";

export const RECORD_PROMPT = "Create probe.txt then list files";

/** OpenCode through its Anthropic provider. */
const opencodeAnthropic: Harness = {
  ...opencode,
  protocol: "anthropic",
  configFiles(o: LaunchOptions) {
    const files: Record<string, string> = {
      [`${OPENCODE_CONFIG_DIR_REL}/opencode.json`]: JSON.stringify(
        opencodeConfig(o, "anthropic"),
        null,
        2,
      ) + "\n",
    };
    for (const [rel, text] of Object.entries(opencodePluginStub())) {
      files[`${OPENCODE_CONFIG_DIR_REL}/${rel}`] = text;
    }
    return files;
  },
};

/** OpenCode without `--title`: it asks the model for a session title. */
const opencodeWithTitleCall: Harness = {
  ...opencode,
  args: (prompt, o) => {
    const args = opencode.args(prompt, o);
    const at = args.indexOf("--title");
    return [...args.slice(0, at), ...args.slice(at + 2)];
  },
};

/** The Gemini CLI with its own retries (the plugin allows one attempt): ten, backed off. */
const geminiWithRetries: Harness = {
  ...geminiCli,
  configFiles() {
    const settings = geminiSettings() as { general: Record<string, unknown> };
    const { maxAttempts: _, ...general } = settings.general;
    return {
      [`${GEMINI_DIR_REL}/settings.json`]: JSON.stringify({ ...settings, general }, null, 2) + "\n",
    };
  },
};

interface Session {
  cli: Harness;
  session: string;
  harness: Harness;
  faults?: Record<number, Fault>;
}

const SESSIONS: Session[] = [
  ...[opencode, qwenCode, miniSweAgent].flatMap((h): Session[] => [
    { cli: h, session: "scenario", harness: h },
    { cli: h, session: "retry", harness: h, faults: { 1: { status: 500 } } },
  ]),
  { cli: opencode, session: "json-to-stream", harness: opencode, faults: { 1: "json-to-stream" } },
  { cli: qwenCode, session: "json-to-stream", harness: qwenCode, faults: { 1: "json-to-stream" } },
  { cli: geminiCli, session: "scenario", harness: geminiCli },
  { cli: geminiCli, session: "retry", harness: geminiWithRetries, faults: { 1: { status: 500 } } },
  {
    cli: geminiCli,
    session: "json-to-stream",
    harness: geminiCli,
    faults: { 1: "json-to-stream" },
  },
  { cli: opencode, session: "anthropic", harness: opencodeAnthropic },
  { cli: opencode, session: "title", harness: opencodeWithTitleCall },
];

const PROTOCOL_DIRS = {
  chat: "openai_chat",
  anthropic: "anthropic",
  responses: "responses",
  gemini: "gemini",
};

/** Where a session's fixture goes. */
export function fixturePath(s: { cli: Harness; session: string; harness: Harness }): URL {
  const dir = PROTOCOL_DIRS[s.harness.protocol];
  return new URL(
    `../../gateway/agent/${dir}/__fixtures__/${s.cli.name}-${s.cli.version}.${s.session}.jsonl`,
    import.meta.url,
  );
}

/** Replaces every occurrence of the run's paths in a record (request bodies and headers). */
function placeholders(r: RecordedRequest, paths: [string, string][]): RecordedRequest {
  let text = JSON.stringify(r);
  for (const [path, name] of paths) text = text.replaceAll(path, name);
  return JSON.parse(text);
}

async function record(s: Session): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: `rollgate-record-${s.cli.name}-` });
  const out = `${tmp}/requests.jsonl`;
  const fake = startFakeLlm({ out, faults: s.faults });
  const probe = startEgressProbe();
  try {
    const workdir = `${tmp}/work`;
    await makeWorkdir(workdir);
    const run = await runLocal(s.harness, RECORD_PROMPT, {
      gatewayUrl: fake.url,
      rolloutId: "rec-1",
      token: "sk-fake-rollgate-token",
      model: "policy-model-v1",
      workdir,
      home: `${tmp}/home`,
    }, { timeoutMs: 300_000, extraEnv: probe.env() });
    const records = fake.records.map((r) =>
      placeholders(r, [[workdir, "<workdir>"], [`${tmp}/home`, "<home>"]])
    );
    const path = fixturePath(s);
    await Deno.writeTextFile(path, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
    console.log(JSON.stringify({
      cli: s.cli.name,
      session: s.session,
      exit: run.exitCode,
      ms: run.durationMs,
      completion: run.completion,
      requests: records.map((r) => `${r.response.status} ${r.url}`),
      outside: probe.attempts,
      fixture: path.pathname.slice(path.pathname.indexOf("/gateway/") + 1),
    }));
  } finally {
    await probe.close();
    await fake.close();
    await Deno.remove(tmp, { recursive: true });
  }
}

if (import.meta.main) {
  const only = new Set(Deno.args);
  for (const s of SESSIONS) {
    if (only.size === 0 || only.has(s.cli.name)) await record(s);
  }
}
