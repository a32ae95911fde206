/**
 * The `agent` verb: runs one agent CLI once against a rollout that already exists on a gateway,
 * as a local subprocess (`harness/`'s `runLocal`: its config files under a throwaway `HOME`, an
 * explicit environment, stdin at `/dev/null`, a time budget), and prints the outcome as one JSON
 * line. It is the launcher a Python trainer calls for each rollout it created (the TRL adapter's
 * GRPO example does): no sandbox, no grading, no gateway of its own.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Harness, HARNESSES, runLocal } from "../harness/mod.ts";
import { integerFlag, POSITIVE } from "./flags.ts";
import { UsageError } from "./usage_error.ts";

const NAMES = Object.keys(HARNESSES);

export const AGENT_USAGE = `usage: main.ts agent --harness ${NAMES.join("|")} --gateway URL
         --rollout ID --token TOKEN --workdir DIR --prompt TEXT
         [--model NAME] [--home DIR] [--time-budget S] [-- CLI ARGUMENT...]

  Runs the agent CLI once in DIR against the rollout's base URL (<gateway>/rollout/<id>) and
  prints {"ok", "final_text", "error", "exit_code", "timed_out", "duration_ms"} as one line.
  Exit status 0 when the CLI's own output says it succeeded, 1 otherwise.

  --home DIR            the CLI's HOME (default: a temporary directory, removed afterwards)
  --model NAME          model id the CLI sends (default rollgate-policy)
  --time-budget S       wall-clock budget of the run (default 300); then its processes are killed
  -- CLI ARGUMENT...    appended to the CLI's own launch arguments (e.g. pi's --tools bash)
`;

/** The agent's outcome, as printed. */
export interface AgentOutcome {
  ok: boolean;
  final_text: string | null;
  error: string | null;
  exit_code: number;
  timed_out: boolean;
  duration_ms: number;
}

/** Runs `main.ts agent <args>`; the exit status. */
export async function agent(args: string[]): Promise<number> {
  const dashes = args.indexOf("--");
  const extra = dashes < 0 ? [] : args.slice(dashes + 1);
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: dashes < 0 ? args : args.slice(0, dashes),
      strict: true,
      allowPositionals: false,
      options: {
        harness: { type: "string" },
        gateway: { type: "string" },
        rollout: { type: "string" },
        token: { type: "string" },
        workdir: { type: "string" },
        prompt: { type: "string" },
        model: { type: "string" },
        home: { type: "string" },
        "time-budget": { type: "string" },
        help: { type: "boolean" },
      },
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${AGENT_USAGE}`);
  }
  if (values.help) {
    console.log(AGENT_USAGE);
    return 0;
  }
  const str = (k: string) => values[k] as string | undefined;
  for (const k of ["harness", "gateway", "rollout", "token", "workdir", "prompt"]) {
    if (!str(k)) throw new UsageError(`--${k} is required\n\n${AGENT_USAGE}`);
  }
  const named = HARNESSES[str("harness") as keyof typeof HARNESSES];
  if (!named) throw new UsageError(`--harness must be one of ${NAMES.join(", ")}`);
  const harness: Harness = extra.length
    ? { ...named, args: (prompt, o) => [...named.args(prompt, o), ...extra] }
    : named;
  const budgetS = integerFlag(str("time-budget"), "--time-budget", POSITIVE) ?? 300;
  const home = str("home") ?? await Deno.makeTempDir({ prefix: `rollgate-agent-${harness.name}-` });
  try {
    const run = await runLocal(harness, str("prompt")!, {
      gatewayUrl: str("gateway")!.replace(/\/+$/, ""),
      rolloutId: str("rollout")!,
      token: str("token")!,
      model: str("model") ?? "rollgate-policy",
      workdir: str("workdir")!,
      home,
    }, { timeoutMs: budgetS * 1000 });
    const outcome: AgentOutcome = {
      ok: run.completion.ok,
      final_text: run.completion.finalText ?? null,
      error: run.completion.error ?? null,
      exit_code: run.exitCode,
      timed_out: run.timedOut,
      duration_ms: run.durationMs,
    };
    console.log(JSON.stringify(outcome));
    return outcome.ok ? 0 : 1;
  } finally {
    if (!str("home")) await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}
